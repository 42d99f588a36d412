package io.orbitkv.manager.transfer;

import org.agrona.collections.Long2LongHashMap;

/**
 * Whether a block restored from a peer is also kept in this Manager's DRAM. Restoring creates destination state
 * only; keeping a replica is a separate decision:
 * <ul>
 *     <li>{@link Policy#OFF}: never (the bytes go to the engine only);</li>
 *     <li>{@link Policy#ALWAYS}: every block fetched from a peer;</li>
 *     <li>{@link Policy#SECOND_HIT}: a block fetched from a peer a second time within the window, so one-off remote
 *     hits do not push local blocks out.</li>
 * </ul>
 * The second-hit memory is bounded: once it holds {@link #MAX_REMEMBERED} keys it is cleared. Keys are remembered
 * by their 64-bit StateKey fingerprint; a collision admits a block one hit early, which costs memory, never
 * correctness.
 */
public final class PeerAdmission
{
    /**
     * Keys the second-hit policy remembers at most.
     */
    public static final int MAX_REMEMBERED = 65_536;

    /**
     * The policies of {@code --peer-admission}.
     */
    public enum Policy
    {
        OFF, ALWAYS, SECOND_HIT;

        /**
         * @return the name as on the command line.
         */
        public String flagValue()
        {
            return this == SECOND_HIT ? "second-hit" : name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Policy policy;
    private final long windowMs;
    private final Long2LongHashMap lastFetchMs = new Long2LongHashMap(MAX_REMEMBERED * 2, 0.65f, Long.MIN_VALUE);

    public PeerAdmission(final Policy policy, final long windowMs)
    {
        this.policy = policy;
        this.windowMs = windowMs;
    }

    /**
     * A block with this fingerprint was just fetched from a peer: keep it locally?
     */
    public boolean admit(final long fingerprint, final long nowMs)
    {
        switch (policy)
        {
            case OFF:
                return false;
            case ALWAYS:
                return true;
            default:
                final long previous = lastFetchMs.get(fingerprint);
                if (Long.MIN_VALUE != previous && nowMs - previous <= windowMs)
                {
                    lastFetchMs.remove(fingerprint);
                    return true;
                }
                if (lastFetchMs.size() >= MAX_REMEMBERED)
                {
                    lastFetchMs.clear();
                }
                lastFetchMs.put(fingerprint, nowMs);
                return false;
        }
    }
}
