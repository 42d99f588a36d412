package io.orbitkv.bench;

import org.agrona.SystemUtil;
import picocli.CommandLine;

/**
 * Option converters of the bench commands, parsing sizes and durations as {@code orbitkv manager} parses its flags
 * (Agrona's {@link SystemUtil} syntax), with the same messages.
 */
final class OptionConverters
{
    private OptionConverters()
    {
    }

    /**
     * Sizes with an optional k/m/g suffix (powers of 1024).
     */
    static final class Size implements CommandLine.ITypeConverter<Long>
    {
        public Long convert(final String value)
        {
            try
            {
                return SystemUtil.parseSize("size", value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException("not a size (e.g. 4096, 64k, 1m, 2g): '" + value + "'");
            }
        }
    }

    /**
     * Durations with a unit suffix: ns, us, ms, s (no suffix = ns).
     */
    static final class Duration implements CommandLine.ITypeConverter<Long>
    {
        public Long convert(final String value)
        {
            try
            {
                return SystemUtil.parseDuration("duration", value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException("not a duration (e.g. 500ms, 5s): '" + value + "'");
            }
        }
    }
}
