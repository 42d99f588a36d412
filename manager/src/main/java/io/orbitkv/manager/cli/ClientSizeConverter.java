package io.orbitkv.manager.cli;

import picocli.CommandLine;

/** Parses byte sizes with an optional k/m/g suffix (powers of 1024), e.g. {@code 64k}, {@code 1g}. */
final class ClientSizeConverter implements CommandLine.ITypeConverter<Long>
{
    public Long convert(final String value)
    {
        final String trimmed = value.trim().toLowerCase(java.util.Locale.ROOT);
        if (trimmed.isEmpty())
        {
            throw new CommandLine.TypeConversionException("empty size");
        }
        final char last = trimmed.charAt(trimmed.length() - 1);
        final long multiplier = switch (last)
        {
            case 'k' -> 1024L;
            case 'm' -> 1024L * 1024;
            case 'g' -> 1024L * 1024 * 1024;
            default -> 1L;
        };
        final String digits = multiplier == 1 ? trimmed : trimmed.substring(0, trimmed.length() - 1);
        try
        {
            final long number = Long.parseLong(digits);
            if (number < 0)
            {
                throw new CommandLine.TypeConversionException("negative size: " + value);
            }
            return Math.multiplyExact(number, multiplier);
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new CommandLine.TypeConversionException("not a size (e.g. 4096, 64k, 1g): " + value);
        }
    }
}
