package io.orbitkv.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A minimal blocking Redis (RESP2) client for the catalog benchmark's anchors: commands are encoded into one reusable
 * direct buffer and written in one go (so a batch of commands is a pipeline), replies are parsed from one reusable
 * buffer without allocation except for INFO. It does no more work per request than our peer path does, so a latency
 * measured through it is the server's plus loopback TCP, not a client library's.
 */
final class RespClient implements AutoCloseable
{
    private static final byte[] CRLF = { '\r', '\n' };

    private final SocketChannel channel;
    private final ByteBuffer out = ByteBuffer.allocateDirect(8 * 1024 * 1024);
    private final ByteBuffer in = ByteBuffer.allocateDirect(1024 * 1024);
    private final byte[] digits = new byte[20];

    /**
     * Start a loopback redis-server through the {@code scripts/redis} helper (free port, never 6379; installs the
     * Debian package when missing).
     *
     * @return its port.
     */
    static int startServer(final String script, final String name) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(script, "start", name)
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (0 != process.waitFor() || !text.startsWith("export ORBITKV_REDIS_PORT="))
        {
            throw new IllegalStateException(script + " start failed: " + text);
        }
        return Integer.parseInt(text.substring("export ORBITKV_REDIS_PORT=".length()).trim());
    }

    static void stopServer(final String script, final String name) throws IOException, InterruptedException
    {
        new ProcessBuilder(script, "stop", name).redirectError(ProcessBuilder.Redirect.INHERIT)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
    }

    RespClient(final int port) throws IOException
    {
        channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.configureBlocking(true);
        in.limit(0);
    }

    /**
     * Start a command of {@code args} arguments (the command name counts).
     */
    RespClient command(final int args)
    {
        out.put((byte)'*');
        putNumber(args);
        out.put(CRLF);
        return this;
    }

    RespClient arg(final String value)
    {
        final byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
        return arg(bytes, 0, bytes.length);
    }

    RespClient arg(final byte[] bytes, final int offset, final int length)
    {
        out.put((byte)'$');
        putNumber(length);
        out.put(CRLF);
        out.put(bytes, offset, length);
        out.put(CRLF);
        return this;
    }

    /**
     * An argument of two parts (namespace then hash: the catalog's key bytes).
     */
    RespClient arg(final byte[] first, final int firstLength, final byte[] second, final int secondOffset,
        final int secondLength)
    {
        out.put((byte)'$');
        putNumber(firstLength + secondLength);
        out.put(CRLF);
        out.put(first, 0, firstLength);
        out.put(second, secondOffset, secondLength);
        out.put(CRLF);
        return this;
    }

    int pendingBytes()
    {
        return out.position();
    }

    /**
     * Write every command encoded since the last flush.
     */
    void flush() throws IOException
    {
        out.flip();
        while (out.hasRemaining())
        {
            channel.write(out);
        }
        out.clear();
    }

    /**
     * Read one reply.
     *
     * @return for an array, the number of non-null elements; for a bulk string its length (-1 when null); for an
     * integer its value; 0 for a simple string.
     * @throws IllegalStateException on an error reply.
     */
    long readReply() throws IOException
    {
        final byte type = next();
        switch (type)
        {
            case '+':
                skipLine();
                return 0;
            case '-':
                throw new IllegalStateException("redis error: " + readLine());
            case ':':
                return readNumber();
            case '$':
            {
                final long length = readNumber();
                if (length >= 0)
                {
                    skip(length + 2);
                }
                return length;
            }
            case '*':
            {
                final long count = readNumber();
                long present = 0;
                for (long i = 0; i < count; i++)
                {
                    if (readReply() >= 0)
                    {
                        present++;
                    }
                }
                return present;
            }
            default:
                throw new IllegalStateException("unexpected RESP type byte " + type);
        }
    }

    /**
     * Read one bulk-string reply as text (INFO).
     */
    String readBulkString() throws IOException
    {
        final byte type = next();
        if ('$' != type)
        {
            throw new IllegalStateException("expected a bulk string, got " + (char)type + readLine());
        }
        final int length = (int)readNumber();
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = next();
        }
        skip(2);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * @return a numeric field of {@code INFO section}, e.g. used_memory.
     */
    long infoField(final String section, final String field) throws IOException
    {
        command(2).arg("INFO").arg(section);
        flush();
        for (final String line : readBulkString().split("\r\n"))
        {
            if (line.startsWith(field + ":"))
            {
                return Long.parseLong(line.substring(field.length() + 1).trim());
            }
        }
        throw new IllegalStateException("INFO " + section + " has no " + field);
    }

    public void close() throws IOException
    {
        channel.close();
    }

    private void putNumber(final int value)
    {
        int v = value;
        int i = digits.length;
        do
        {
            digits[--i] = (byte)('0' + v % 10);
            v /= 10;
        }
        while (v > 0);
        out.put(digits, i, digits.length - i);
    }

    private byte next() throws IOException
    {
        if (!in.hasRemaining())
        {
            in.clear();
            while (in.position() == 0)
            {
                if (channel.read(in) < 0)
                {
                    throw new IOException("redis closed the connection");
                }
            }
            in.flip();
        }
        return in.get();
    }

    private long readNumber() throws IOException
    {
        long value = 0;
        boolean negative = false;
        byte b = next();
        if ('-' == b)
        {
            negative = true;
            b = next();
        }
        while ('\r' != b)
        {
            value = value * 10 + (b - '0');
            b = next();
        }
        next();
        return negative ? -value : value;
    }

    private void skipLine() throws IOException
    {
        while ('\r' != next())
        {
            // skip
        }
        next();
    }

    private String readLine() throws IOException
    {
        final StringBuilder line = new StringBuilder();
        byte b;
        while ('\r' != (b = next()))
        {
            line.append((char)b);
        }
        next();
        return line.toString();
    }

    private void skip(final long bytes) throws IOException
    {
        for (long i = 0; i < bytes; i++)
        {
            next();
        }
    }
}
