package io.orbitkv.manager.events;

import io.orbitkv.manager.status.FixedCounter;

/**
 * Counters of the KV-event publisher: residency records queued by the Manager's agent, records dropped because the
 * ring between it and the publisher was full, batches and events sent, and replay requests served or refused.
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one.
 */
public enum KvEventCounter implements FixedCounter
{
    EVENTS_QUEUED(240, "KV events: residency records queued for the publisher", false),
    EVENTS_DROPPED(241, "KV events: residency records dropped (publisher ring full)", false),
    BATCHES_SENT(242, "KV events: batches published", false),
    EVENTS_SENT(243, "KV events: events published", false),
    REPLAY_REQUESTS_SERVED(244, "KV events: replay requests served", false),
    REPLAY_REQUESTS_REFUSED(245, "KV events: replay requests refused (malformed)", false),
    SEND_FAILURES(246, "KV events: batches the PUB socket did not take", false),
    LINEAGE_QUEUED(247, "KV events: block lineages (parent hash, token ids) queued for the publisher", false),
    LINEAGE_DROPPED(248, "KV events: block lineages dropped (publisher ring full)", false),
    LINEAGE_EVICTED(249, "KV events: block lineages the publisher forgot to stay within its memory bound", false);

    private final Spec spec;

    KvEventCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
