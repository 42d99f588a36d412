package io.orbitkv.catalog;

/**
 * The last {@link ShardReceiver#MAX_RETIRED_INCARNATIONS} incarnations an owner had on one shard, oldest overwritten
 * first: late evidence from any of them is refused and none can be admitted again.
 */
final class RetiredIncarnations
{
    private final long[] retired = new long[ShardReceiver.MAX_RETIRED_INCARNATIONS * 2];
    private int count;
    private int next;

    void retire(final long msb, final long lsb)
    {
        retired[next * 2] = msb;
        retired[next * 2 + 1] = lsb;
        next = (next + 1) % ShardReceiver.MAX_RETIRED_INCARNATIONS;
        count = Math.min(count + 1, ShardReceiver.MAX_RETIRED_INCARNATIONS);
    }

    boolean contains(final long msb, final long lsb)
    {
        for (int i = 0; i < count; i++)
        {
            if (retired[i * 2] == msb && retired[i * 2 + 1] == lsb)
            {
                return true;
            }
        }
        return false;
    }
}
