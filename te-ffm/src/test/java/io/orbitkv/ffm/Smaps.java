package io.orbitkv.ffm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of {@code /proc/self/smaps}: what the kernel says about this process's mappings.
 */
final class Smaps
{
    static final Path PATH = Path.of("/proc/self/smaps");

    record Mapping(long start, long end, Map<String, Long> sizesKb, String vmFlags)
    {
        boolean contains(final long address)
        {
            return address >= start && address < end;
        }

        boolean intersects(final long address, final long length)
        {
            return start < address + length && address < end;
        }

        long sizeKb(final String field)
        {
            final Long value = sizesKb.get(field);
            if (null == value)
            {
                throw new IllegalStateException(field + " missing from smaps entry " + this);
            }
            return value;
        }

        boolean hasVmFlag(final String flag)
        {
            for (final String token : vmFlags.trim().split("\\s+"))
            {
                if (token.equals(flag))
                {
                    return true;
                }
            }
            return false;
        }
    }

    private final List<Mapping> mappings;

    private Smaps(final List<Mapping> mappings)
    {
        this.mappings = mappings;
    }

    static Smaps read()
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(PATH);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }

        final List<Mapping> mappings = new ArrayList<>();
        long start = -1;
        long end = -1;
        Map<String, Long> sizes = new HashMap<>();
        String vmFlags = "";
        for (final String line : lines)
        {
            final int colon = line.indexOf(':');
            final int space = line.indexOf(' ');
            final boolean isHeader = space > 0 && line.indexOf('-') > 0 && line.indexOf('-') < space &&
                (colon < 0 || colon > space);
            if (isHeader)
            {
                if (start >= 0)
                {
                    mappings.add(new Mapping(start, end, sizes, vmFlags));
                }
                final String range = line.substring(0, space);
                final int dash = range.indexOf('-');
                start = Long.parseUnsignedLong(range.substring(0, dash), 16);
                end = Long.parseUnsignedLong(range.substring(dash + 1), 16);
                sizes = new HashMap<>();
                vmFlags = "";
            }
            else if (line.startsWith("VmFlags:"))
            {
                vmFlags = line.substring("VmFlags:".length());
            }
            else if (colon > 0 && line.endsWith(" kB"))
            {
                final String value = line.substring(colon + 1, line.length() - " kB".length()).trim();
                sizes.put(line.substring(0, colon), Long.parseLong(value));
            }
        }
        if (start >= 0)
        {
            mappings.add(new Mapping(start, end, sizes, vmFlags));
        }

        return new Smaps(mappings);
    }

    Mapping mappingContaining(final long address)
    {
        for (final Mapping mapping : mappings)
        {
            if (mapping.contains(address))
            {
                return mapping;
            }
        }
        return null;
    }

    boolean anyIntersects(final long address, final long length)
    {
        for (final Mapping mapping : mappings)
        {
            if (mapping.intersects(address, length))
            {
                return true;
            }
        }
        return false;
    }
}
