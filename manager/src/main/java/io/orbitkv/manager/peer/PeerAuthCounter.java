package io.orbitkv.manager.peer;

import io.orbitkv.manager.status.FixedCounter;

/**
 * Counters of the authenticated peer channel ({@code --cluster-secret-file}): frames signed and verified, frames
 * dropped by reason before any handler saw them, the replay windows, and the built-in transport's connection
 * handshakes (the secret's and TLS's). Fixed ids 300..319: never renumber or reuse one.
 */
public enum PeerAuthCounter implements FixedCounter
{
    ENABLED(300, "Peer auth: peer frames are authenticated (1) or not (0)", true),
    FRAMES_SIGNED(301, "Peer auth: frames sent with a MAC trailer", false),
    FRAMES_VERIFIED(302, "Peer auth: frames whose MAC and sequence verified", false),
    DROPPED_BAD_MAC(303, "Peer auth: frames dropped, MAC does not verify", false),
    DROPPED_DUPLICATE(304, "Peer auth: frames dropped, replayed (sequence already seen)", false),
    DROPPED_TOO_OLD(305, "Peer auth: frames dropped, replayed (sequence older than the replay window)", false),
    DROPPED_SHORT(306, "Peer auth: frames dropped, too short to hold the MAC trailer", false),
    DROPPED_UNKNOWN_INCARNATION(307,
        "Peer auth: frames dropped, unknown sender incarnation (none named, or no replay window free)", false),
    SENDER_WINDOWS(308, "Peer auth: replay windows in use (sender incarnations)", true),
    SENDER_WINDOWS_RECYCLED(309, "Peer auth: replay windows recycled after their sender fell idle", false),
    HANDSHAKES_PROVED(310, "Peer auth: transfer transport connections whose handshake proved the secret", true),
    HANDSHAKES_FAILED(311, "Peer auth: transfer transport connections closed, handshake failed", true),
    TLS_ENABLED(312, "Peer auth: transfer transport connections use TLS (1) or not (0)", true),
    TLS_HANDSHAKES_DONE(313, "Peer auth: transfer transport connections whose TLS handshake completed", true),
    TLS_HANDSHAKES_FAILED(314, "Peer auth: transfer transport connections closed, TLS handshake failed", true);

    private final Spec spec;

    PeerAuthCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
