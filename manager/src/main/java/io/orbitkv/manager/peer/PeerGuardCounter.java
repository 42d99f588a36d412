package io.orbitkv.manager.peer;

import io.orbitkv.manager.status.FixedCounter;

/**
 * Counters of the peer socket's guard: datagrams the embedded media driver never acted on because their Aeron
 * header could not come from a peer transport of this cluster's settings, frames the driver itself refused, and
 * images the peer agent stopped reading. Fixed ids 360..369: never renumber or reuse one.
 */
public enum PeerGuardCounter implements FixedCounter
{
    DROPPED_SETUP_TERM_LENGTH(360, "Peer guard: setup frames dropped, term length not the configured one", false),
    DROPPED_SETUP_MTU(361, "Peer guard: setup frames dropped, MTU out of range or term offset not aligned", false),
    DROPPED_DATA_OFFSET(362, "Peer guard: data frames dropped, term offset not aligned or past the term", false),
    DRIVER_FRAME_ERRORS(363, "Peer guard: frames the media driver refused (counted, not logged)", false),
    IMAGES_REJECTED(364, "Peer guard: images rejected (term length not the configured one, or a poll failed)", false),
    IMAGE_POLL_ERRORS(365, "Peer guard: image polls that failed (the image is no longer read)", false),
    DROPPED_NOT_MEMBER(366, "Peer guard: setup, data and RTT frames dropped, source is no member's host", false);

    private final Spec spec;

    PeerGuardCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
