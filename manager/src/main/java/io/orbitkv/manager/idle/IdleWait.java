package io.orbitkv.manager.idle;

/**
 * How an idle agent sleeps once backing off has reached its parking phase: until an event it can see, or the park
 * time. {@code LockSupport.parkNanos} is the wait that sees no event.
 */
@FunctionalInterface
public interface IdleWait
{
    /**
     * @param timeoutNs the longest the wait may last.
     * @return true when an event ended it (the agent has work), false after the timeout.
     */
    boolean await(long timeoutNs);
}
