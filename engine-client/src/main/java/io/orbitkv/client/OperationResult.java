package io.orbitkv.client;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;

/**
 * The reusable outcome of one Publish, Lookup or Read over a whole {@link KeyBatch}, however many requests the
 * client split it into. Per-key rows stay aligned with the batch: keys the client never sent (after a short
 * prefix or an error) are {@link KeyStatus#NOT_ATTEMPTED}.
 *
 * <ul>
 *   <li>{@link #value()}: Publish, blocks stored; Lookup, resident prefix length; Read, blocks restored.</li>
 *   <li>{@link #leaseCount()}/{@link #leaseId(int)}: a pinned Lookup holds one lease per request sent (request
 *   {@code i} covers keys {@code [i * MAX_KEYS_PER_REQUEST, ...)}).</li>
 *   <li>{@link #message()}: the reason of a non-OK code; the String is built only when asked for.</li>
 * </ul>
 *
 * <p>Not thread safe.
 */
public final class OperationResult
{
    private final KeyStatus[] statuses;
    private final int[] lengths;
    private final long[] leaseIds;
    private final byte[] messageBytes = new byte[EngineRingLimits.MAX_MESSAGE_LENGTH];
    private int messageLength;
    private String message;
    private StatusCode code = StatusCode.OK;
    private long value;
    private int keyCount;
    private int leaseCount;
    private int requestCount;

    /**
     * Create a result able to describe batches of up to {@code maxKeys} keys.
     *
     * @param maxKeys capacity in keys, at least 1.
     */
    public OperationResult(final int maxKeys)
    {
        if (maxKeys < 1)
        {
            throw new IllegalArgumentException("maxKeys must be >= 1: " + maxKeys);
        }
        statuses = new KeyStatus[maxKeys];
        lengths = new int[maxKeys];
        leaseIds = new long[(maxKeys + EngineRingLimits.MAX_KEYS_PER_REQUEST - 1) / EngineRingLimits.MAX_KEYS_PER_REQUEST];
    }

    public int maxKeys()
    {
        return statuses.length;
    }

    /**
     * Status of the operation: OK, or the first non-OK code the Manager answered (later requests not sent).
     *
     * @return the status code.
     */
    public StatusCode code()
    {
        return code;
    }

    public boolean isOk()
    {
        return code == StatusCode.OK;
    }

    public long value()
    {
        return value;
    }

    public int keyCount()
    {
        return keyCount;
    }

    public KeyStatus status(final int index)
    {
        checkIndex(index);
        return statuses[index];
    }

    /**
     * Block length in bytes reported for a key, 0 where unknown.
     *
     * @param index key index.
     * @return length in bytes.
     */
    public int length(final int index)
    {
        checkIndex(index);
        return lengths[index];
    }

    public int leaseCount()
    {
        return leaseCount;
    }

    /**
     * The lease of request {@code i} of a pinned Lookup; 0 if that request pinned nothing.
     *
     * @param i request index.
     * @return lease id.
     */
    public long leaseId(final int i)
    {
        if (i < 0 || i >= leaseCount)
        {
            throw new IndexOutOfBoundsException("lease index " + i + " not in [0, " + leaseCount + ")");
        }
        return leaseIds[i];
    }

    /**
     * The first lease of a pinned Lookup, or 0.
     *
     * @return lease id.
     */
    public long leaseId()
    {
        return leaseCount > 0 ? leaseIds[0] : 0;
    }

    /**
     * Number of requests sent for this operation.
     *
     * @return request count.
     */
    public int requestCount()
    {
        return requestCount;
    }

    /**
     * The Manager's reason for a non-OK code, or an empty string.
     *
     * @return the message (allocated on first call after an error).
     */
    public String message()
    {
        if (message == null)
        {
            message = new String(messageBytes, 0, messageLength, StandardCharsets.US_ASCII);
        }
        return message;
    }

    /**
     * Count of keys with the given status.
     *
     * @param status the status to count.
     * @return how many keys have it.
     */
    public int count(final KeyStatus status)
    {
        int n = 0;
        for (int i = 0; i < keyCount; i++)
        {
            if (statuses[i] == status)
            {
                n++;
            }
        }
        return n;
    }

    void reset(final int keyCount)
    {
        if (keyCount > statuses.length)
        {
            throw new IllegalArgumentException("result holds " + statuses.length + " keys, batch has " + keyCount);
        }
        this.keyCount = keyCount;
        for (int i = 0; i < keyCount; i++)
        {
            statuses[i] = KeyStatus.NOT_ATTEMPTED;
            lengths[i] = 0;
        }
        code = StatusCode.OK;
        value = 0;
        leaseCount = 0;
        requestCount = 0;
        messageLength = 0;
        message = "";
    }

    void key(final int index, final KeyStatus status, final int length)
    {
        statuses[index] = status;
        lengths[index] = length;
    }

    void addValue(final long delta)
    {
        value += delta;
    }

    void addLease(final long leaseId)
    {
        leaseIds[leaseCount++] = leaseId;
    }

    void requestSent()
    {
        requestCount++;
    }

    void failed(final StatusCode code)
    {
        this.code = code;
        messageLength = 0;
        message = null;
    }

    byte[] messageBytes()
    {
        return messageBytes;
    }

    void messageLength(final int length)
    {
        messageLength = length;
        message = null;
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= keyCount)
        {
            throw new IndexOutOfBoundsException("key index " + index + " not in [0, " + keyCount + ")");
        }
    }
}
