package io.orbitkv.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

import org.agrona.DirectBuffer;

/**
 * Maps namespace names (1..{@link #MAX_NAMESPACE_BYTES} bytes, compared exactly) to small dense ids so that block
 * keys carry an int instead of the name. Lookups are allocation free; registering a new namespace is a slow path that
 * copies the name once. Ids are never reused: a namespace keeps its id for the table's life. Not thread safe: one
 * thread owns a table (lookups remember the last name found, because consecutive keys usually share a namespace).
 */
public final class NamespaceTable
{
    /**
     * Default bound on distinct namespaces.
     */
    public static final int DEFAULT_MAX_NAMESPACES = 1024;

    /**
     * Longest namespace name in bytes.
     */
    public static final int MAX_NAMESPACE_BYTES = 256;

    /**
     * Returned by {@link #lookup} for an unknown namespace.
     */
    public static final int NOT_FOUND = -1;

    /**
     * Returned by {@link #register} when {@code maxNamespaces} namespaces exist.
     */
    public static final int LIMIT_REACHED = -2;

    private static final int EMPTY = -1;
    private static final VarHandle NATIVE_LONGS =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final int maxNamespaces;
    private final byte[][] names;
    private final int[] hashes;
    private final int[] slots;
    private final int slotMask;
    private int size;
    private int lastFound = EMPTY;

    /**
     * Table bounded by {@link #DEFAULT_MAX_NAMESPACES}.
     */
    public NamespaceTable()
    {
        this(DEFAULT_MAX_NAMESPACES);
    }

    /**
     * @param maxNamespaces bound on distinct namespaces, at least 1.
     */
    public NamespaceTable(final int maxNamespaces)
    {
        if (maxNamespaces < 1 || maxNamespaces > (1 << 28))
        {
            throw new IllegalArgumentException("maxNamespaces out of range: " + maxNamespaces);
        }
        this.maxNamespaces = maxNamespaces;
        names = new byte[maxNamespaces][];
        hashes = new int[maxNamespaces];
        // Load stays at or below 1/2, so probes are short and always end at an empty slot.
        final int slotCount = Integer.highestOneBit(maxNamespaces) << 2;
        slots = new int[slotCount];
        slotMask = slotCount - 1;
        Arrays.fill(slots, EMPTY);
    }

    /**
     * @param buffer holding the name.
     * @param offset of the name.
     * @param length of the name, 1..{@link #MAX_NAMESPACE_BYTES}.
     * @return the namespace id, or {@link #NOT_FOUND}.
     */
    public int lookup(final DirectBuffer buffer, final int offset, final int length)
    {
        checkLength(length);
        final int last = lastFound;
        if (EMPTY != last && nameEquals(names[last], buffer, offset, length))
        {
            return last;
        }
        final int hash = hash(buffer, offset, length);
        int slot = hash & slotMask;
        while (true)
        {
            final int id = slots[slot];
            if (EMPTY == id)
            {
                return NOT_FOUND;
            }
            if (hashes[id] == hash && nameEquals(names[id], buffer, offset, length))
            {
                lastFound = id;
                return id;
            }
            slot = (slot + 1) & slotMask;
        }
    }

    /**
     * Register a namespace, or return its id if it exists already.
     *
     * @param buffer holding the name.
     * @param offset of the name.
     * @param length of the name, 1..{@link #MAX_NAMESPACE_BYTES}.
     * @return the namespace id, or {@link #LIMIT_REACHED}.
     */
    public int register(final DirectBuffer buffer, final int offset, final int length)
    {
        final int existing = lookup(buffer, offset, length);
        if (NOT_FOUND != existing)
        {
            return existing;
        }
        if (size == maxNamespaces)
        {
            return LIMIT_REACHED;
        }
        final int id = size++;
        final byte[] name = new byte[length];
        buffer.getBytes(offset, name);
        final int hash = hash(buffer, offset, length);
        names[id] = name;
        hashes[id] = hash;
        int slot = hash & slotMask;
        while (EMPTY != slots[slot])
        {
            slot = (slot + 1) & slotMask;
        }
        slots[slot] = id;
        return id;
    }

    /**
     * @param buffer holding the name.
     * @param offset of the name.
     * @param length of the name, 1..{@link #MAX_NAMESPACE_BYTES}.
     * @return the namespace id, or {@link #LIMIT_REACHED}; allocates only when the namespace is new.
     */
    public int lookupOrRegister(final DirectBuffer buffer, final int offset, final int length)
    {
        final int id = lookup(buffer, offset, length);
        return NOT_FOUND != id ? id : register(buffer, offset, length);
    }

    /**
     * @param id a registered namespace id.
     * @return a copy of the name bytes.
     */
    public byte[] namespaceBytes(final int id)
    {
        if (id < 0 || id >= size)
        {
            throw new IllegalArgumentException("unknown namespace id: " + id);
        }
        return names[id].clone();
    }

    /**
     * Copy a namespace's bytes without allocating.
     *
     * @param id        a registered namespace id.
     * @param dst       destination.
     * @param dstOffset offset in the destination.
     * @return bytes copied.
     */
    public int copyNamespace(final int id, final org.agrona.MutableDirectBuffer dst, final int dstOffset)
    {
        if (id < 0 || id >= size)
        {
            throw new IllegalArgumentException("unknown namespace id: " + id);
        }
        final byte[] name = names[id];
        dst.putBytes(dstOffset, name);
        return name.length;
    }

    /**
     * Point a view at a namespace's stored bytes, copying nothing: the view is read only by contract (names never
     * change once registered) and stays valid for the table's life.
     *
     * @param id   a registered namespace id.
     * @param view wrapped over the name.
     * @return the name's length.
     */
    public int wrapNamespace(final int id, final org.agrona.concurrent.UnsafeBuffer view)
    {
        if (id < 0 || id >= size)
        {
            throw new IllegalArgumentException("unknown namespace id: " + id);
        }
        final byte[] name = names[id];
        view.wrap(name);
        return name.length;
    }

    /**
     * @return number of registered namespaces.
     */
    public int size()
    {
        return size;
    }

    /**
     * @return bound on distinct namespaces.
     */
    public int maxNamespaces()
    {
        return maxNamespaces;
    }

    private static boolean nameEquals(final byte[] name, final DirectBuffer buffer, final int offset, final int length)
    {
        if (name.length != length)
        {
            return false;
        }
        // Eight bytes at a time (both in native order), the tail byte by byte: names run on every key of a batch.
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES)
        {
            if ((long)NATIVE_LONGS.get(name, i) != buffer.getLong(offset + i))
            {
                return false;
            }
        }
        for (; i < length; i++)
        {
            if (name[i] != buffer.getByte(offset + i))
            {
                return false;
            }
        }
        return true;
    }

    private static int hash(final DirectBuffer buffer, final int offset, final int length)
    {
        int h = length * 0x9E3779B9;
        for (int i = 0; i < length; i++)
        {
            h = (h ^ buffer.getByte(offset + i)) * 0x01000193;
        }
        return h ^ (h >>> 16);
    }

    private static void checkLength(final int length)
    {
        if (length < 1 || length > MAX_NAMESPACE_BYTES)
        {
            throw new IllegalArgumentException("namespace length must be in [1, " + MAX_NAMESPACE_BYTES + "]: " + length);
        }
    }
}
