package io.orbitkv.manager.cli;

import io.orbitkv.manager.Configuration;
import picocli.CommandLine;

/**
 * picocli converters for the size and duration options of every command (the Manager's, the client's, the bench
 * harness's), reading values the way {@link Configuration} reads its properties, so a size or a duration is spelt the
 * same on a command line and in a system property.
 */
public final class OptionConverters
{
    private OptionConverters()
    {
    }

    /**
     * Sizes with an optional k/m/g suffix (powers of 1024), as {@link Configuration#parseSize} reads them; never
     * negative.
     */
    public static final class Size implements CommandLine.ITypeConverter<Long>
    {
        /**
         * {@inheritDoc}
         */
        public Long convert(final String value)
        {
            final long size;
            try
            {
                size = Configuration.parseSize("size", value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException("not a size (e.g. 4096, 64k, 1m, 2g): '" + value + "'");
            }
            if (size < 0)
            {
                throw new CommandLine.TypeConversionException("negative size: '" + value + "'");
            }
            return size;
        }
    }

    /**
     * Durations with a unit suffix: ns, us, ms, s (no suffix = ns), as {@link Configuration#parseDurationNs} reads
     * them.
     */
    public static final class Duration implements CommandLine.ITypeConverter<Long>
    {
        /**
         * {@inheritDoc}
         */
        public Long convert(final String value)
        {
            try
            {
                return Configuration.parseDurationNs("duration", value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException("not a duration (e.g. 500ms, 5s): '" + value + "'");
            }
        }
    }
}
