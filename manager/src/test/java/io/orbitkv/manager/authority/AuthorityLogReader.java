package io.orbitkv.manager.authority;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test-side reader of an authority log file, written from {@link AuthorityLogDescriptor} alone (what a tool outside the
 * JVM does too): the header, each section's capacity and position, and every record whose sequence is complete.
 */
final class AuthorityLogReader
{
    record Record(int section, long index, int type, int incarnation, long monoNs, long wallMs, long epoch, long uuidMsb,
        long uuidLsb, long[] fields)
    {
    }

    final long pid;
    final String nodeId;
    final String cluster;
    final long[] capacity;
    final long[] position;
    final List<Record> records = new ArrayList<>();

    private AuthorityLogReader(final ByteBuffer b)
    {
        if (AuthorityLogDescriptor.MAGIC != b.getInt(AuthorityLogDescriptor.MAGIC_OFFSET))
        {
            throw new IllegalStateException("no authority log header");
        }
        pid = b.getLong(AuthorityLogDescriptor.PID_OFFSET);
        nodeId = name(b, AuthorityLogDescriptor.NODE_ID_LENGTH_OFFSET, AuthorityLogDescriptor.NODE_ID_OFFSET);
        cluster = name(b, AuthorityLogDescriptor.CLUSTER_LENGTH_OFFSET, AuthorityLogDescriptor.CLUSTER_OFFSET);
        final int sections = b.getInt(AuthorityLogDescriptor.SECTION_COUNT_OFFSET);
        capacity = new long[sections];
        position = new long[sections];
        for (int s = 0; s < sections; s++)
        {
            final int at = AuthorityLogDescriptor.sectionOffset(s);
            final long data = b.getLong(at + AuthorityLogDescriptor.SECTION_DATA_OFFSET);
            capacity[s] = b.getLong(at + AuthorityLogDescriptor.SECTION_CAPACITY_OFFSET);
            position[s] = b.getLong(at + AuthorityLogDescriptor.SECTION_POSITION_OFFSET);
            for (long i = Math.max(0, position[s] - capacity[s]); i < position[s]; i++)
            {
                final int r = (int)(data + (i % capacity[s]) * AuthorityLogDescriptor.RECORD_LENGTH);
                if (b.getLong(r + AuthorityLogDescriptor.SEQUENCE_OFFSET) != i + 1)
                {
                    continue;
                }
                final long[] fields = new long[AuthorityLogDescriptor.FIELDS];
                for (int f = 0; f < fields.length; f++)
                {
                    fields[f] = b.getLong(r + AuthorityLogDescriptor.FIELDS_OFFSET + 8 * f);
                }
                records.add(new Record(s, i, b.getInt(r + AuthorityLogDescriptor.TYPE_OFFSET),
                    b.getInt(r + AuthorityLogDescriptor.INCARNATION_OFFSET), b.getLong(r + AuthorityLogDescriptor.MONO_NS_OFFSET),
                    b.getLong(r + AuthorityLogDescriptor.WALL_MS_OFFSET), b.getLong(r + AuthorityLogDescriptor.EPOCH_OFFSET),
                    b.getLong(r + AuthorityLogDescriptor.UUID_MSB_OFFSET), b.getLong(r + AuthorityLogDescriptor.UUID_LSB_OFFSET),
                    fields));
            }
        }
    }

    static AuthorityLogReader read(final Path file) throws IOException
    {
        return new AuthorityLogReader(ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN));
    }

    List<Record> ofType(final int type)
    {
        return records.stream().filter((r) -> r.type() == type).toList();
    }

    private static String name(final ByteBuffer b, final int lengthOffset, final int offset)
    {
        final byte[] bytes = new byte[b.getInt(lengthOffset)];
        b.get(offset, bytes);
        return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }
}
