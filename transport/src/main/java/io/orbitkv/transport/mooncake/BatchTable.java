package io.orbitkv.transport.mooncake;

import java.lang.foreign.MemorySegment;

import io.orbitkv.ffm.te.TransferEngineC;
import io.orbitkv.transport.SlotPool;

/**
 * The TE batches of a {@link MooncakeTransport}: reads are appended to the current batch until it holds
 * {@code readsPerBatch} tasks, and a batch is freed once each of its tasks was polled to COMPLETED or FAILED, which
 * is the library's condition for freeing it. Every batch holds at least one outstanding read, so the table needs no
 * more entries than there are read slots.
 */
final class BatchTable
{
    private final TransferEngineC te;
    private final MemorySegment engine;
    private final int readsPerBatch;
    private final long[] batchId;
    private final int[] submitted;
    private final int[] finalTasks;
    private final SlotPool freeBatches;
    private int current = -1;
    private long freeFailureCount;

    BatchTable(final TransferEngineC te, final MemorySegment engine, final int capacity, final int readsPerBatch)
    {
        this.te = te;
        this.engine = engine;
        this.readsPerBatch = readsPerBatch;
        batchId = new long[capacity];
        submitted = new int[capacity];
        finalTasks = new int[capacity];
        freeBatches = new SlotPool(capacity);
    }

    /**
     * @return the batch the next read goes to, allocated from the library when none is open; -1 when no entry is
     * free or the library allocates none.
     */
    int current()
    {
        if (-1 == current)
        {
            if (0 == freeBatches.available())
            {
                return -1;
            }
            final long id = te.allocateBatchID(engine, readsPerBatch);
            if (TransferEngineC.INVALID_BATCH == id)
            {
                return -1;
            }
            final int batch = freeBatches.take();
            batchId[batch] = id;
            submitted[batch] = 0;
            finalTasks[batch] = 0;
            current = batch;
        }
        return current;
    }

    long id(final int batch)
    {
        return batchId[batch];
    }

    /**
     * Count a task submitted to the batch; a full batch stops being the current one.
     *
     * @return the task's index in its batch.
     */
    int addTask(final int batch)
    {
        final int task = submitted[batch]++;
        if (submitted[batch] == readsPerBatch)
        {
            current = -1;
        }
        return task;
    }

    /**
     * The library refused a submit to the batch: later reads go to a new one, and this one is freed when it holds no
     * task that is not final.
     */
    void abandon(final int batch)
    {
        current = -1;
        releaseIfDone(batch);
    }

    void taskFinal(final int batch)
    {
        finalTasks[batch]++;
    }

    void releaseIfDone(final int batch)
    {
        if (finalTasks[batch] < submitted[batch])
        {
            return;
        }
        if (batch == current)
        {
            current = -1;
        }
        final int rc = te.freeBatchID(engine, batchId[batch]);
        if (TransferEngineC.RC_OK != rc)
        {
            freeFailureCount++;
        }
        batchId[batch] = TransferEngineC.INVALID_BATCH;
        freeBatches.release(batch);
    }

    /**
     * On close: free the open batch if each of its tasks is final.
     */
    void releaseCurrentIfDone()
    {
        if (-1 != current)
        {
            releaseIfDone(current);
        }
    }

    int inUse()
    {
        return freeBatches.inUse();
    }

    long freeFailureCount()
    {
        return freeFailureCount;
    }
}
