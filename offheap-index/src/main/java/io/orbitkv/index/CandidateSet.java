package io.orbitkv.index;

import io.orbitkv.codecs.CatalogLimits;

/**
 * Reusable holder of up to {@link CatalogLimits#MAX_CANDIDATES_PER_ROW} candidates of one StateKey: owner node index,
 * owner runtime UUID, insertion sequence, tier and byte size. Preallocated once per caller; never a raw address.
 */
public final class CandidateSet
{
    public static final int CAPACITY = CatalogLimits.MAX_CANDIDATES_PER_ROW;

    final int[] ownerNode = new int[CAPACITY];
    final long[] incarnationMsb = new long[CAPACITY];
    final long[] incarnationLsb = new long[CAPACITY];
    final long[] insertionSequence = new long[CAPACITY];
    final int[] tier = new int[CAPACITY];
    final long[] byteSize = new long[CAPACITY];
    final long[] generation = new long[CAPACITY];
    int count;

    public CandidateSet clear()
    {
        count = 0;
        return this;
    }

    /**
     * Append a candidate whose residency generation is not known (the requester-side index does not keep it).
     *
     * @return false (and nothing added) when the set already holds {@link #CAPACITY}.
     */
    public boolean add(
        final int ownerNode,
        final long incarnationMsb,
        final long incarnationLsb,
        final long insertionSequence,
        final int tier,
        final long byteSize)
    {
        return add(ownerNode, incarnationMsb, incarnationLsb, insertionSequence, tier, byteSize, 0);
    }

    /**
     * Append a candidate with its residency generation (catalog host answers).
     *
     * @return false (and nothing added) when the set already holds {@link #CAPACITY}.
     */
    public boolean add(
        final int ownerNode,
        final long incarnationMsb,
        final long incarnationLsb,
        final long insertionSequence,
        final int tier,
        final long byteSize,
        final long generation)
    {
        if (count == CAPACITY)
        {
            return false;
        }
        final int i = count++;
        this.generation[i] = generation;
        this.ownerNode[i] = ownerNode;
        this.incarnationMsb[i] = incarnationMsb;
        this.incarnationLsb[i] = incarnationLsb;
        this.insertionSequence[i] = insertionSequence;
        this.tier[i] = tier;
        this.byteSize[i] = byteSize;
        return true;
    }

    public int count()
    {
        return count;
    }

    public int ownerNode(final int i)
    {
        return ownerNode[i];
    }

    public long incarnationMsb(final int i)
    {
        return incarnationMsb[i];
    }

    public long incarnationLsb(final int i)
    {
        return incarnationLsb[i];
    }

    public long insertionSequence(final int i)
    {
        return insertionSequence[i];
    }

    public int tier(final int i)
    {
        return tier[i];
    }

    public long byteSize(final int i)
    {
        return byteSize[i];
    }

    /**
     * @return the residency generation, 0 when unknown.
     */
    public long generation(final int i)
    {
        return generation[i];
    }

    /**
     * Overwrite candidate {@code to} with candidate {@code from} of another set.
     */
    public void replace(final int to, final CandidateSet other, final int from)
    {
        ownerNode[to] = other.ownerNode[from];
        incarnationMsb[to] = other.incarnationMsb[from];
        incarnationLsb[to] = other.incarnationLsb[from];
        insertionSequence[to] = other.insertionSequence[from];
        tier[to] = other.tier[from];
        byteSize[to] = other.byteSize[from];
        generation[to] = other.generation[from];
    }

    /**
     * Copy candidate {@code from} over candidate {@code to} (compacting a filtered set).
     */
    public void copy(final int from, final int to)
    {
        replace(to, this, from);
    }

    /**
     * Keep the first {@code newCount} candidates.
     */
    public void truncate(final int newCount)
    {
        if (newCount < 0 || newCount > count)
        {
            throw new IllegalArgumentException("cannot truncate " + count + " candidates to " + newCount);
        }
        count = newCount;
    }
}
