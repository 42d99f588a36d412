package io.orbitkv.client;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The Manager's pool, mapped read-write, for a Manager that lets engines write their saves into it
 * ({@code --engine-pool-access write-reserved}): a Prepare's answer names a slot by its offset here, the engine writes
 * the block there, and its Commit seals it. Writes outside the slots a Prepare gave this client corrupt other blocks;
 * their checksums, taken at Commit, keep such damage from spreading to other Managers and the SSD tier.
 */
final class ManagerPool implements AutoCloseable
{
    private final Arena arena;
    private final MemorySegment pool;

    private ManagerPool(final Arena arena, final MemorySegment pool)
    {
        this.arena = arena;
        this.pool = pool;
    }

    /**
     * @param file the pool's shared file.
     * @return the mapping.
     * @throws EngineClientException when the file cannot be mapped.
     */
    static ManagerPool map(final Path file)
    {
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            return new ManagerPool(arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena));
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            throw new EngineClientException(EngineClientException.Reason.ATTACH_REJECTED, null,
                "cannot map the Manager's pool " + file + ": " + ex, ex);
        }
    }

    MemorySegment segment()
    {
        return pool;
    }

    public void close()
    {
        arena.close();
    }
}
