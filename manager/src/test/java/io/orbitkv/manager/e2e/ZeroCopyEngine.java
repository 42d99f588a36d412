package io.orbitkv.manager.e2e;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.LockSupport;

/**
 * An engine process for {@link ZeroCopySaveEndToEndTest}: attaches to the Manager in {@code args[0]}, prepares
 * {@code args[1]} blocks of {@code args[2]} bytes, writes them into their slots, prints {@code prepared N} and then
 * waits, never committing, until it is killed.
 */
public final class ZeroCopyEngine
{
    private ZeroCopyEngine()
    {
    }

    public static void main(final String[] args)
    {
        final int blocks = Integer.parseInt(args[1]);
        final int blockBytes = Integer.parseInt(args[2]);
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(args[0]).clientName("zero-copy-victim").dataRegionBytes(1 << 20));
        final KeyBatch batch = new KeyBatch(blocks)
            .namespace(ZeroCopySaveEndToEndTest.NAMESPACE.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < blocks; i++)
        {
            batch.addKey(ZeroCopySaveEndToEndTest.hash(i), 0, 32, 0, blockBytes);
        }
        final OperationResult result = client.prepare(batch, new OperationResult(blocks));
        final MemorySegment pool = client.pool();
        for (int i = 0; i < blocks; i++)
        {
            if (KeyStatus.RESERVED == result.status(i))
            {
                pool.asSlice(result.poolOffset(i), blockBytes).fill((byte)0x5A);
            }
        }
        System.out.println("prepared " + result.value());
        System.out.flush();
        while (!Thread.currentThread().isInterrupted())
        {
            LockSupport.parkNanos(1_000_000_000L);
            pool.get(ValueLayout.JAVA_BYTE, 0);
        }
    }
}
