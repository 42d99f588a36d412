package io.orbitkv.bench;

import java.util.concurrent.TimeUnit;

import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.bench.peer.BenchPeer;
import io.orbitkv.manager.peer.PeerTransport;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * How {@link CatalogBench} drives its peers: connect an owner to a host, stream the owner's journal to the hosts of
 * its shards with flow control, step every peer's duty cycle, wait for applies and acks with a stall deadline, and
 * size journals and inventories for a key count. Stateless: every method works on the peers it is given.
 */
final class CatalogPeers
{
    /** How long applying or acknowledging may make no progress at all before a wait for it fails. */
    static final long STALL_NS = TimeUnit.SECONDS.toNanos(30);

    /**
     * Window an owner wants before it encodes a delta batch: a full batch of these keys is ~21 KiB, and a frame that
     * does not fit the rest of the term is preceded by padding that also consumes window.
     */
    static final long FRAME_WINDOW_BYTES = 32 * 1024;

    private static final int OWNER_SEGMENT = 64 * 1024;

    private CatalogPeers()
    {
    }

    static boolean allAcked(final BenchPeer owner, final int hostNode)
    {
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (owner.ackedSequence(hostNode, s) < owner.journal().lastSequence(s))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Idle strategy of the bench's agent threads: the one a Manager's agent uses by default (spin, yield, then park
     * up to 100 us; {@code -Dorbitkv.manager.idle.strategy} changes it).
     */
    static IdleStrategy agentIdleStrategy()
    {
        return Configuration.newIdleStrategy(Configuration.idleStrategyName());
    }

    static void awaitApplied(final BenchPeer host, final long records) throws InterruptedException
    {
        final StallDeadline deadline = new StallDeadline(STALL_NS, host.appliedRecords(), System.nanoTime());
        while (host.appliedRecords() < records)
        {
            if (deadline.stalled(host.appliedRecords(), System.nanoTime()))
            {
                throw new IllegalStateException("host applied only " + host.appliedRecords() + " of " + records +
                    " records, none in the last " + TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s; errors: " +
                    host.errors());
            }
            if (!host.errors().isEmpty())
            {
                throw new IllegalStateException("host errors: " + host.errors());
            }
            // The observer wakes rarely: each wake takes a core from the two agent threads for a moment.
            Thread.sleep(1);
        }
    }

    static boolean rebuilt(final BenchPeer host, final long entries)
    {
        long total = 0;
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            final ShardReceiver receiver = host.directory().receiver(0, s);
            if (ShardReceiver.STREAMING != receiver.mode() || 0 == receiver.snapshotsInstalled())
            {
                return false;
            }
            total += receiver.viewSize();
        }
        return total == entries;
    }

    static int sendPending(
        final BenchPeer owner, final PeerClient[] clientOfShard, final long[] next)
    {
        int work = 0;
        final int maxBatch = owner.catalogProxy().maxBatchRecords();
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (next[s] <= owner.journal().lastSequence(s) &&
                owner.publisher().availableWindow(clientOfShard[s]) >= FRAME_WINDOW_BYTES)
            {
                final int n = owner.catalogProxy().sendDeltaBatch(clientOfShard[s], s, owner.journal(), next[s], maxBatch);
                if (n > 0)
                {
                    next[s] += n;
                    work++;
                }
                else if (n < 0)
                {
                    throw new IllegalStateException("owner journal no longer holds shard " + s + " from " + next[s]);
                }
            }
        }
        return work;
    }

    static int dutyAll(final BenchPeer owner, final BenchPeer[] hosts)
    {
        int work = owner.doWork();
        for (final BenchPeer host : hosts)
        {
            work += host.doWork();
        }
        return work;
    }

    static void streamAll(
        final BenchPeer owner, final BenchPeer[] hosts, final PeerClient[] clientOfShard, final int[] hostOfShard,
        final long[] next)
    {
        final StallDeadline deadline = new StallDeadline(STALL_NS, 0, System.nanoTime());
        while (true)
        {
            boolean done = true;
            long acked = 0;
            for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
            {
                final long shardAcked = owner.ackedSequence(hosts[hostOfShard[s]].nodeIndex(), s);
                acked += shardAcked;
                done &= shardAcked == owner.journal().lastSequence(s);
            }
            if (done)
            {
                return;
            }
            if (0 == sendPending(owner, clientOfShard, next) + dutyAll(owner, hosts))
            {
                Thread.yield();
            }
            if (deadline.stalled(acked, System.nanoTime()))
            {
                throw new IllegalStateException("streaming to the hosts made no progress for " +
                    TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s; errors " + owner.errors());
            }
        }
    }

    static boolean caughtUp(final long[] seen, final BenchPeer owner)
    {
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (seen[s] < owner.journal().lastSequence(s))
            {
                return false;
            }
        }
        return true;
    }

    static PeerClient connect(final BenchPeer from, final BenchPeer to)
    {
        final PeerClient client = from.publisher().connect(
            to.transport().endpoint(), to.nodeIndex(), to.incarnationMsb(), to.incarnationLsb());
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!client.isActive())
        {
            if (client.isFailed() || System.nanoTime() - deadlineNs > 0)
            {
                throw new IllegalStateException("no session from node " + from.nodeIndex() + " to " + to.nodeIndex());
            }
            if (0 == from.doWork() + to.doWork())
            {
                Thread.yield();
            }
        }
        return client;
    }

    static void checkErrors(final BenchPeer... peers)
    {
        for (final BenchPeer peer : peers)
        {
            if (!peer.errors().isEmpty() || peer.rejections() > 0)
            {
                throw new IllegalStateException("node " + peer.nodeIndex() + ": " + peer.rejections() +
                    " rejections, errors " + peer.errors());
            }
        }
    }

    static long journalBudgetFor(final long records)
    {
        // 96-byte journal records for these keys, segments partly filled at the tail, and room to spare.
        final long bytes = records * 96 * 5 / 4 + (32L << 20);
        return Math.min(bytes, (Integer.MAX_VALUE / OWNER_SEGMENT) * (long)OWNER_SEGMENT);
    }

    static long inventoryShardBudget(final long keys)
    {
        return CatalogRecordTable.budgetFor((int)(keys / CatalogLimits.SHARD_COUNT * 5 / 4) + 4096);
    }

    /**
     * The peers' embedded driver: invoked from each peer's duty cycle (the transport's default, null here), or on a
     * thread of its own with a backoff or yielding idle strategy (diagnostics).
     *
     * @param name {@code --driver-idle}: invoked, backoff, backoff-short or yielding.
     * @return the strategy, null for invoked.
     */
    static IdleStrategy driverIdle(final String name)
    {
        return switch (name)
        {
            case "invoked" -> null;
            case "backoff" -> PeerTransport.Context.backoffDriverIdleStrategy();
            case "backoff-short" -> new BackoffIdleStrategy(10, 20, 1_000, 20_000);
            case "yielding" -> new YieldingIdleStrategy();
            default -> throw new IllegalArgumentException("driver idle must be invoked, backoff, backoff-short or yielding: " +
                name);
        };
    }
}
