package io.orbitkv.ffm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A fresh directory per test under {@code target/} on the work disk, never under {@code /dev/shm}: tmpfs accepts
 * {@code O_DIRECT} and ignores it, so alignment errors and the block layer would never be exercised.
 */
final class WorkDiskDirectory
{
    private WorkDiskDirectory()
    {
    }

    /**
     * Create a new directory below {@code target/<parent>}.
     *
     * @param parent folder under {@code target/} shared by the runs of one test class.
     * @return the new directory's absolute path.
     * @throws IOException if it cannot be created.
     */
    static Path create(final String parent) throws IOException
    {
        final Path target = Files.createDirectories(Path.of("target", parent));
        return Files.createTempDirectory(target, "run-").toAbsolutePath();
    }

    /**
     * Delete a directory and everything below it.
     *
     * @param directory the directory.
     * @throws IOException if a file cannot be deleted.
     */
    static void delete(final Path directory) throws IOException
    {
        try (Stream<Path> paths = Files.walk(directory))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
