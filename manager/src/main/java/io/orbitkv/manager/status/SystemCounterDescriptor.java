package io.orbitkv.manager.status;

/**
 * The Manager's process-wide counters: internal errors, time to ready, and the idle agent's sleeps and wake-ups.
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one; a new
 * counter takes an id no family holds ({@link SystemCounters} lays every family out by id).
 */
public enum SystemCounterDescriptor implements FixedCounter
{
    ERRORS(22, "Errors", false),
    READY_MS(134, "Start: ms from process start to ready", true),
    IDLE_SLEEPS(135, "Idle: agent sleeps (until a doorbell, a peer datagram or the longest sleep)", false),
    IDLE_DOORBELL_WAKEUPS(136, "Idle: sleeps ended by an engine's doorbell", false),
    IDLE_PEER_WAKEUPS(137, "Idle: sleeps ended by a peer datagram", false),
    IDLE_SLEEPS_ABANDONED(138, "Idle: sleeps abandoned, a request came in while announcing", false),
    IDLE_DOORBELL_BYTES(139, "Idle: doorbell rings drained (bytes engines wrote)", false);

    private final Spec spec;

    SystemCounterDescriptor(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
