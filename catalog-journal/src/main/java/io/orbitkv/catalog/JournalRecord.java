package io.orbitkv.catalog;

import io.orbitkv.codecs.StateKey;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Reusable carrier of one catalog record: a residence transition of one StateKey within one owner stream. The key
 * bytes are copied into an internal buffer sized for the longest key, so one instance is preallocated per component
 * and reused for every record (no allocation per record).
 * <p>
 * In a delta the sequence is the owner stream sequence; in a snapshot page it is the record version (the sequence of
 * the transition that produced the current state).
 */
public final class JournalRecord
{
    /**
     * Residence tier DRAM (matches the SBE ResidenceTier value).
     */
    public static final int TIER_DRAM = 0;

    /**
     * Residence tier SSD (matches the SBE ResidenceTier value).
     */
    public static final int TIER_SSD = 1;

    /**
     * Transition: a residence became discoverable (matches the SBE CatalogOp value).
     */
    public static final int OP_ADD = 0;

    /**
     * Transition: a residence stopped existing (matches the SBE CatalogOp value).
     */
    public static final int OP_REMOVE = 1;

    private final UnsafeBuffer ownNamespace = new UnsafeBuffer(new byte[StateKey.MAX_NAMESPACE_LENGTH]);
    private final UnsafeBuffer ownHash = new UnsafeBuffer(new byte[StateKey.MAX_HASH_LENGTH]);
    private final UnsafeBuffer namespaceView = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer hashView = new UnsafeBuffer(0, 0);
    private UnsafeBuffer namespace = ownNamespace;
    private UnsafeBuffer hash = ownHash;
    private int namespaceLength;
    private int hashLength;
    private long sequence;
    private int tier;
    private int op;
    private long generation;
    private long insertionSequence;
    private int byteSize;

    /**
     * Set the key, copying its bytes.
     *
     * @return this.
     */
    public JournalRecord key(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        StateKey.checkLengths(namespaceLength, hashLength);
        ownNamespace.putBytes(0, namespace, namespaceOffset, namespaceLength);
        ownHash.putBytes(0, hash, hashOffset, hashLength);
        return useKey(ownNamespace, namespaceLength, ownHash, hashLength);
    }

    /**
     * Set the key to bytes held elsewhere, without copying them (a record decoded from a frame and consumed before the
     * frame changes). {@link #namespace()} and {@link #hash()} read through to those bytes until the next key is set.
     *
     * @return this.
     */
    public JournalRecord keyView(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        StateKey.checkLengths(namespaceLength, hashLength);
        namespaceView.wrap(namespace, namespaceOffset, namespaceLength);
        hashView.wrap(hash, hashOffset, hashLength);
        return useKey(namespaceView, namespaceLength, hashView, hashLength);
    }

    private JournalRecord useKey(
        final UnsafeBuffer namespace, final int namespaceLength, final UnsafeBuffer hash, final int hashLength)
    {
        this.namespace = namespace;
        this.hash = hash;
        this.namespaceLength = namespaceLength;
        this.hashLength = hashLength;
        return this;
    }

    /**
     * Set every field but the key.
     *
     * @return this.
     */
    public JournalRecord set(
        final long sequence,
        final int tier,
        final int op,
        final long generation,
        final long insertionSequence,
        final int byteSize)
    {
        if (tier != TIER_DRAM && tier != TIER_SSD)
        {
            throw new IllegalArgumentException("unknown tier: " + tier);
        }
        if (op != OP_ADD && op != OP_REMOVE)
        {
            throw new IllegalArgumentException("unknown op: " + op);
        }
        this.sequence = sequence;
        this.tier = tier;
        this.op = op;
        this.generation = generation;
        this.insertionSequence = insertionSequence;
        this.byteSize = byteSize;
        return this;
    }

    public JournalRecord sequence(final long sequence)
    {
        this.sequence = sequence;
        return this;
    }

    public UnsafeBuffer namespace()
    {
        return namespace;
    }

    public int namespaceLength()
    {
        return namespaceLength;
    }

    public UnsafeBuffer hash()
    {
        return hash;
    }

    public int hashLength()
    {
        return hashLength;
    }

    public long sequence()
    {
        return sequence;
    }

    public int tier()
    {
        return tier;
    }

    public int op()
    {
        return op;
    }

    public long generation()
    {
        return generation;
    }

    public long insertionSequence()
    {
        return insertionSequence;
    }

    public int byteSize()
    {
        return byteSize;
    }
}
