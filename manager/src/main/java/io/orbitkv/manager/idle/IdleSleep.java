package io.orbitkv.manager.idle;

/**
 * The deepest phase of an idle agent: a sleep that the agent's inputs can end (an engine's doorbell, a peer's
 * datagram) or that lasts until the agent's next deadline, for agents that have been idle for a while.
 */
@FunctionalInterface
public interface IdleSleep
{
    /**
     * Sleep, unless work arrived while the sleep was being announced.
     *
     * @return true when an event ended the sleep or work was found before it began (the agent has work), false
     *         after the timeout.
     */
    boolean sleep();

    /**
     * A short sleep of the parking phase that the same inputs can end: announced like {@link #sleep()}, so an engine
     * that commits a request meanwhile rings rather than waiting out the park. By default a plain timer park.
     *
     * @param timeoutNs the longest the nap may last.
     * @return true when an event ended it or work was found before it began, false after the timeout.
     */
    default boolean nap(final long timeoutNs)
    {
        java.util.concurrent.locks.LockSupport.parkNanos(timeoutNs);
        return false;
    }
}
