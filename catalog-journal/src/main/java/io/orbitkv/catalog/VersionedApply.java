package io.orbitkv.catalog;

import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;

/**
 * The version rule of a {@link ShardReceiver}'s views: per (key, tier) the record with the newest version wins, an
 * equal version with the same content is a duplicate and with other content a conflict, an older one is refused (and
 * counted as a prevented resurrection when it would bring back a removed residence). Outcomes are the receiver's
 * constants; the counters here are the receiver's version counters.
 */
final class VersionedApply
{
    private final NamespaceTable namespaces;
    private long duplicates;
    private long conflicts;
    private long olderRejected;
    private long resurrectionsPrevented;

    VersionedApply(final NamespaceTable namespaces)
    {
        this.namespaces = namespaces;
    }

    /**
     * A delta at or below the contiguous sequence: a duplicate, or a conflict when the live view holds the same
     * version of the key with different content.
     *
     * @param liveView the installed view, or null.
     * @param record   the record seen again.
     * @return {@code ShardReceiver.DUPLICATE} or {@code ShardReceiver.CONFLICT}.
     */
    int duplicate(final CatalogRecordTable liveView, final JournalRecord record)
    {
        duplicates++;
        if (null != liveView)
        {
            final int namespaceId = namespaces.lookup(record.namespace(), 0, record.namespaceLength());
            if (namespaceId >= 0)
            {
                final int id = liveView.find(namespaceId, record.tier(), record.hash(), 0, record.hashLength());
                if (id >= 0 && liveView.version(id) == record.sequence() && !sameContent(liveView, id, record))
                {
                    conflicts++;
                    return ShardReceiver.CONFLICT;
                }
            }
        }
        return ShardReceiver.DUPLICATE;
    }

    /**
     * Latest version wins per (key, tier). In the ordered live stream a removal deletes the record (the contiguous
     * sequence rejects anything older); in a view under construction it leaves a tombstone with its version.
     */
    int apply(final CatalogRecordTable view, final JournalRecord record, final boolean ordered)
    {
        final int namespaceId = namespaces.lookupOrRegister(record.namespace(), 0, record.namespaceLength());
        if (namespaceId < 0)
        {
            return ShardReceiver.NAMESPACE_LIMIT;
        }
        final long version = record.sequence();
        final boolean removal = JournalRecord.OP_REMOVE == record.op();
        int id = view.find(namespaceId, record.tier(), record.hash(), 0, record.hashLength());
        if (id >= 0)
        {
            final long existing = view.version(id);
            if (version < existing)
            {
                olderRejected++;
                if (!removal && view.isTombstone(id))
                {
                    resurrectionsPrevented++;
                }
                return ShardReceiver.REJECTED_OLDER;
            }
            if (version == existing)
            {
                if (sameContent(view, id, record))
                {
                    duplicates++;
                    return ShardReceiver.DUPLICATE;
                }
                conflicts++;
                return ShardReceiver.CONFLICT;
            }
            if (removal && ordered)
            {
                view.remove(id);
            }
            else
            {
                view.set(id, version, record.generation(), record.insertionSequence(), record.byteSize(), removal);
            }
            return ShardReceiver.APPLIED;
        }
        if (removal && ordered)
        {
            return ShardReceiver.APPLIED;
        }
        id = view.insert(namespaceId, record.tier(), record.hash(), 0, record.hashLength());
        if (id < 0)
        {
            return ShardReceiver.VIEW_FULL;
        }
        view.set(id, version, record.generation(), record.insertionSequence(), record.byteSize(), removal);
        return ShardReceiver.APPLIED;
    }

    private static boolean sameContent(final CatalogRecordTable view, final int id, final JournalRecord record)
    {
        return view.isTombstone(id) == (JournalRecord.OP_REMOVE == record.op()) &&
            view.generation(id) == record.generation() &&
            view.insertionSequence(id) == record.insertionSequence() &&
            view.byteSize(id) == record.byteSize();
    }

    long duplicates()
    {
        return duplicates;
    }

    long conflicts()
    {
        return conflicts;
    }

    long olderRejected()
    {
        return olderRejected;
    }

    long resurrectionsPrevented()
    {
        return resurrectionsPrevented;
    }
}
