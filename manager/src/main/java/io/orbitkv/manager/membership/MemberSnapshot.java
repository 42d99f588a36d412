package io.orbitkv.manager.membership;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.orbitkv.codecs.ShardPlacement;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A consistent read of all member records, the installed placement and the placement transition at one revision: the
 * first page fixes the revision, later pages are read at it and continue after the previous page's last key (design:
 * pages of 128 records). Only keys under {@code members/} are member records; the placement keys, the reconciler key
 * and the coverage reports are read by name, never as members.
 *
 * @param revision  the revision every page was read at.
 * @param members   valid records by node id.
 * @param leaseIds  etcd lease of each valid record, by node id.
 * @param rejected  records skipped as malformed or over 1 KiB, with the reason.
 * @param placement the placement at that revision, or null if none is installed or it is unreadable.
 * @param placementError why the installed placement is unreadable, or null.
 * @param generation     the installed placement's generation (0 when there is none or it is unreadable).
 * @param transition     the placement transition at that revision, or null if none runs or it is unreadable.
 * @param transitionError why the transition record is unreadable, or null.
 */
public record MemberSnapshot(
    long revision,
    Map<String, MemberRecord> members,
    Map<String, Long> leaseIds,
    Map<String, String> rejected,
    ShardPlacement placement,
    String placementError,
    long generation,
    PlacementTransition transition,
    String transitionError)
{
    /**
     * Read a snapshot.
     *
     * @param etcd        gateway.
     * @param clusterName cluster.
     * @param pages       counts the pages read; may be null.
     * @return the snapshot.
     * @throws MemberOverflowException if there are more than 4,096 member keys.
     */
    public static MemberSnapshot read(final EtcdGateway etcd, final String clusterName, final AtomicCounter pages)
    {
        final String prefix = MembershipConfiguration.membersPrefix(clusterName);
        // The prefix ends in '/', so its range end is the same text ending in '0' (the next byte value).
        final ByteSequence end = EtcdGateway.bytes(prefix.substring(0, prefix.length() - 1) + "0");
        ByteSequence from = EtcdGateway.bytes(prefix);
        long revision = 0;
        int count = 0;
        final Map<String, MemberRecord> members = new TreeMap<>();
        final Map<String, Long> leaseIds = new TreeMap<>();
        final Map<String, String> rejected = new TreeMap<>();
        while (true)
        {
            final GetResponse page = etcd.page(from, end, revision, MembershipConfiguration.SNAPSHOT_PAGE_SIZE);
            if (null != pages)
            {
                pages.increment();
            }
            if (0 == revision)
            {
                revision = page.getHeader().getRevision();
            }
            final List<KeyValue> kvs = page.getKvs();
            for (final KeyValue kv : kvs)
            {
                if (++count > MembershipConfiguration.MAX_MEMBERS)
                {
                    throw new MemberOverflowException("more than " + MembershipConfiguration.MAX_MEMBERS +
                        " member records under " + prefix + " at revision " + revision);
                }
                final String key = kv.getKey().toString(StandardCharsets.UTF_8);
                try
                {
                    final MemberRecord record = MemberRecord.decode(key, kv.getValue().getBytes());
                    members.put(record.nodeId(), record);
                    leaseIds.put(record.nodeId(), kv.getLease());
                }
                catch (final MemberRecord.MalformedRecordException ex)
                {
                    rejected.put(key, ex.getMessage());
                }
            }
            if (!page.isMore() || kvs.isEmpty())
            {
                break;
            }
            final byte[] last = kvs.get(kvs.size() - 1).getKey().getBytes();
            final byte[] next = new byte[last.length + 1];
            System.arraycopy(last, 0, next, 0, last.length);
            from = ByteSequence.from(next);
        }

        final KeyValue placementKv = readKey(etcd, MembershipConfiguration.placementKey(clusterName), revision);
        ShardPlacement placement = null;
        String placementError = null;
        long generation = 0;
        if (null != placementKv)
        {
            try
            {
                final PlacementRecord.Generational installed =
                    PlacementRecord.decodeGenerational(placementKv.getValue().getBytes());
                placement = installed.placement();
                generation = installed.generation();
            }
            catch (final IllegalStateException ex)
            {
                placementError = ex.getMessage();
            }
        }
        final KeyValue transitionKv =
            readKey(etcd, MembershipConfiguration.placementTransitionKey(clusterName), revision);
        PlacementTransition transition = null;
        String transitionError = null;
        if (null != transitionKv)
        {
            try
            {
                transition = TransitionRecord.decode(transitionKv.getValue().getBytes());
            }
            catch (final IllegalStateException ex)
            {
                transitionError = ex.getMessage();
            }
        }
        return new MemberSnapshot(revision, members, leaseIds, rejected, placement, placementError, generation,
            transition, transitionError);
    }

    private static KeyValue readKey(final EtcdGateway etcd, final String key, final long revision)
    {
        final GetResponse response = etcd.page(EtcdGateway.bytes(key), EtcdGateway.bytes(key + "\0"), revision, 1);
        return response.getKvs().isEmpty() ? null : response.getKvs().get(0);
    }

    /**
     * More member records than a view may hold.
     */
    public static final class MemberOverflowException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        MemberOverflowException(final String message)
        {
            super(message);
        }
    }
}
