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
}
