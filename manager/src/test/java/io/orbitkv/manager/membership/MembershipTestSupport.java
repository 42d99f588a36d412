package io.orbitkv.manager.membership;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.agrona.concurrent.SystemNanoClock;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A Membership joined in-process with its own counters and a captured log, plus raw etcd access for tests that
 * write what a misbehaving peer would.
 */
final class MembershipTestSupport
{
    private MembershipTestSupport()
    {
    }

    static final class Joined implements AutoCloseable
    {
        final Membership membership;
        final SystemCounters counters;
        final ByteArrayOutputStream logBytes;
        final String clusterName;

        Joined(final Membership membership, final SystemCounters counters, final ByteArrayOutputStream logBytes,
            final String clusterName)
        {
            this.membership = membership;
            this.counters = counters;
            this.logBytes = logBytes;
            this.clusterName = clusterName;
        }

        long counter(final CounterDescriptor descriptor)
        {
            return counters.get(descriptor).get();
        }

        String log()
        {
            return logBytes.toString(StandardCharsets.UTF_8);
        }

        public void close()
        {
            membership.close();
        }
    }

    /**
     * Settings with the default copies per shard, the same as a Manager started without --catalog-replicas.
     */
    static MembershipSettings settings(
        final String endpoints, final String cluster, final String nodeId, final String catalogNodes)
    {
        return settings(endpoints, cluster, nodeId, catalogNodes,
            io.orbitkv.manager.Configuration.CATALOG_REPLICAS_DEFAULT);
    }

    static MembershipSettings settings(
        final String endpoints, final String cluster, final String nodeId, final String catalogNodes, final int replicas)
    {
        return new MembershipSettings(endpoints, cluster, nodeId, io.orbitkv.manager.Configuration.MEMBERSHIP_TTL_SECS_DEFAULT,
            io.orbitkv.manager.Configuration.ETCD_DEADLINE_MS_DEFAULT, ShardPlacement.parse(catalogNodes, replicas),
            "peer-" + nodeId + ":7470", "transfer-" + nodeId + ":7471", UUID.randomUUID(), System.currentTimeMillis());
    }

    static MembershipSettings settings(
        final String endpoints, final String cluster, final String nodeId, final String catalogNodes, final int replicas,
        final int maxShardMoves)
    {
        final MembershipSettings base = settings(endpoints, cluster, nodeId, catalogNodes, replicas);
        return new MembershipSettings(base.etcdEndpoints(), base.clusterName(), base.nodeId(), base.ttlSecs(),
            base.etcdDeadlineMs(), base.placement(), base.peerEndpoint(), base.transferEndpoint(), base.runtimeUuid(),
            base.startTimeMs(), base.joinTimeoutMs(), maxShardMoves);
    }

    static Joined join(final MembershipSettings settings, final Runnable beforeWatchHook)
    {
        final SystemCounters counters = SystemCounterFamilies.inMemory();
        final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
        final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);
        final Membership membership = Membership.join(settings, counters,
            (throwable) -> throwable.printStackTrace(log), log, SystemNanoClock.INSTANCE, beforeWatchHook);
        return new Joined(membership, counters, logBytes, settings.clusterName());
    }

    static Joined join(final String endpoints, final String cluster, final String nodeId, final String catalogNodes)
    {
        return join(settings(endpoints, cluster, nodeId, catalogNodes), null);
    }

    static Joined join(
        final String endpoints, final String cluster, final String nodeId, final String catalogNodes, final int replicas)
    {
        return join(settings(endpoints, cluster, nodeId, catalogNodes, replicas), null);
    }

    static void await(final BooleanSupplier condition, final long timeoutMs, final Supplier<String> message)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("timed out after " + timeoutMs + " ms: " + message.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    static void awaitCompleteWith(final Joined joined, final String... nodeIds)
    {
        await(() ->
        {
            final MemberView view = joined.membership.view();
            if (!view.isComplete())
            {
                return false;
            }
            for (final String id : nodeIds)
            {
                if (null == view.member(id))
                {
                    return false;
                }
            }
            return true;
        }, 15_000, () -> "complete view with " + String.join(",", nodeIds) + ", have " + joined.membership.view() +
            "\n" + joined.log());
    }

    static ByteSequence bytes(final String s)
    {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static void put(final Client client, final String key, final byte[] value) throws Exception
    {
        client.getKVClient().put(bytes(key), ByteSequence.from(value)).get(5, TimeUnit.SECONDS);
    }

    static void delete(final Client client, final String key) throws Exception
    {
        client.getKVClient().delete(bytes(key)).get(5, TimeUnit.SECONDS);
    }

    static byte[] fakeRecord(final String nodeId, final int padTo)
    {
        final MemberRecord record = new MemberRecord(nodeId, 1, new UUID(1, 2), 0, "peer", "t", 1, 0);
        final byte[] plain = record.encode();
        if (padTo <= plain.length)
        {
            return plain;
        }
        // Grow the peer endpoint so the JSON is exactly padTo bytes (ASCII: one byte per character).
        final String text = new String(plain, StandardCharsets.UTF_8)
            .replace("\"peerEndpoint\":\"peer\"", "\"peerEndpoint\":\"peer" + "x".repeat(padTo - plain.length) + "\"");
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
