package io.orbitkv.manager.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether engines' data regions, files the Manager creates under a directory and both sides map shared, will be made
 * of 2 MiB pages: only then does an SSD read straight into a region beat staging and a copy (a 2 MiB O_DIRECT read
 * into 4 KiB pages is split into several device requests; see docs/ssd-tier.md). That is the case when the directory
 * is on a tmpfs mounted {@code huge=always} or {@code huge=within_size}, or when the kernel forces shmem THP
 * ({@code shmem_enabled} = {@code force}). Read once at start from {@code /proc/self/mountinfo}.
 */
public final class DataRegionPages
{
    /** Where the mounts of this process are listed. */
    public static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");
    /** The kernel's shmem THP policy. */
    public static final Path SHMEM_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/shmem_enabled");

    /**
     * The answer and why, for the start banner.
     *
     * @param huge   whether regions under the directory get 2 MiB pages.
     * @param reason the mount (or policy) that decided.
     */
    public record Verdict(boolean huge, String reason)
    {
    }

    private DataRegionPages()
    {
    }

    /**
     * @param dir the directory of the data regions (need not exist yet).
     * @return the verdict; 4 KiB pages when the mount table cannot be read.
     */
    public static Verdict of(final Path dir)
    {
        try
        {
            final String shmem = Files.exists(SHMEM_ENABLED) ? Files.readString(SHMEM_ENABLED) : "";
            return of(resolved(dir), Files.readAllLines(MOUNTINFO), shmem);
        }
        catch (final IOException | RuntimeException ex)
        {
            return new Verdict(false, "mount table unreadable (" + ex.getMessage() + ")");
        }
    }

    /**
     * @param dir          absolute, normalized directory.
     * @param mountinfo    lines of {@code /proc/self/mountinfo}.
     * @param shmemEnabled content of {@code shmem_enabled} (the selected policy in brackets), or empty.
     * @return the verdict for the mount holding {@code dir}.
     */
    static Verdict of(final Path dir, final List<String> mountinfo, final String shmemEnabled)
    {
        String mountPoint = null;
        String fsType = null;
        String options = null;
        for (final String line : mountinfo)
        {
            final String[] fields = line.split(" ");
            int dash = -1;
            for (int i = 6; i < fields.length; i++)
            {
                if ("-".equals(fields[i]))
                {
                    dash = i;
                    break;
                }
            }
            if (fields.length < 5 || dash < 0 || fields.length < dash + 4)
            {
                continue;
            }
            final String point = unescape(fields[4]);
            // The longest mount point holding the directory; of equal ones the later (it is mounted over the other).
            if (dir.startsWith(Path.of(point)) && (null == mountPoint || point.length() >= mountPoint.length()))
            {
                mountPoint = point;
                fsType = fields[dash + 1];
                options = fields[dash + 3];
            }
        }
        if (shmemEnabled.contains("[force]") && "tmpfs".equals(fsType))
        {
            return new Verdict(true, "tmpfs at " + mountPoint + " with shmem THP forced");
        }
        if (null == mountPoint)
        {
            return new Verdict(false, "no mount found for " + dir);
        }
        if ("tmpfs".equals(fsType))
        {
            for (final String option : options.split(","))
            {
                if ("huge=always".equals(option) || "huge=within_size".equals(option))
                {
                    return new Verdict(true, "tmpfs at " + mountPoint + " mounted " + option);
                }
            }
            return new Verdict(false, "tmpfs at " + mountPoint + " without huge=always or huge=within_size");
        }
        return new Verdict(false, fsType + " at " + mountPoint + ", not tmpfs");
    }

    private static Path resolved(final Path dir)
    {
        Path path = dir.toAbsolutePath().normalize();
        // Resolve symbolic links of the part that exists already.
        Path existing = path;
        while (null != existing && !Files.exists(existing))
        {
            existing = existing.getParent();
        }
        if (null != existing)
        {
            try
            {
                path = existing.toRealPath().resolve(existing.relativize(path));
            }
            catch (final IOException ex)
            {
                return path;
            }
        }
        return path;
    }

    /** Mount points escape space, tab, newline and backslash as octal. */
    private static String unescape(final String field)
    {
        if (field.indexOf('\\') < 0)
        {
            return field;
        }
        final StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++)
        {
            final char c = field.charAt(i);
            if ('\\' == c && i + 3 < field.length())
            {
                out.append((char)Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            }
            else
            {
                out.append(c);
            }
        }
        return out.toString();
    }
}
