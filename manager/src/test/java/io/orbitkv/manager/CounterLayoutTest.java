package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.status.CounterSet;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import java.nio.charset.StandardCharsets;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;

/**
 * The counters section as the Manager fills it (system counters, then the peer transport's), as external readers
 * ({@code orbitkv stat}, /metrics, dashboards) rely on it: every system counter at its fixed id with that id as its
 * key, every id between them held by a reserved placeholder, the peer counters after them in declaration order with
 * their own type ids and no key; and a reader finds each counter again by its descriptor.
 */
class CounterLayoutTest
{
    @Test
    void shouldLayOutSystemThenPeerCountersAndFindEachByItsDescriptor()
    {
        final int valuesLength = 512 * CountersReader.COUNTER_LENGTH;
        final CountersManager countersManager = new CountersManager(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength * 4, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength, 64)),
            StandardCharsets.US_ASCII);
        try (SystemCounters system = new SystemCounters(countersManager);
            PeerCounters peer = new PeerCounters(countersManager))
        {
            final SystemCounterDescriptor[] descriptors = SystemCounterDescriptor.values();
            final int lastSystemId = descriptors[descriptors.length - 1].id();
            for (int id = 0; id <= lastSystemId; id++)
            {
                final SystemCounterDescriptor descriptor = SystemCounterDescriptor.get(id);
                if (null == descriptor)
                {
                    assertEquals(CounterSet.RESERVED_COUNTER_TYPE_ID, countersManager.getCounterTypeId(id));
                    assertEquals("Reserved system counter id " + id, countersManager.getCounterLabel(id));
                    continue;
                }
                assertEquals(SystemCounterDescriptor.SYSTEM_COUNTER_TYPE_ID, countersManager.getCounterTypeId(id));
                assertEquals(descriptor.label(), countersManager.getCounterLabel(id));
                assertEquals(id, system.get(descriptor).id());
                assertEquals(id, keyInt(countersManager, id), "key of " + descriptor);
                system.get(descriptor).set(1000L + id);
                assertEquals(1000L + id, descriptor.valueIn(countersManager));
            }

            int counterId = lastSystemId + 1;
            for (final PeerCounter counter : PeerCounter.values())
            {
                assertEquals(counterId, peer.get(counter).id(), counter.name());
                assertEquals(PeerCounter.TYPE_ID_BASE + counter.id(), countersManager.getCounterTypeId(counterId));
                assertEquals(counter.label(), countersManager.getCounterLabel(counterId));
                assertEquals(0, keyInt(countersManager, counterId), "no key for " + counter);
                assertEquals(counterId, counter.counterIdIn(countersManager));
                peer.add(counter, 7L + counter.ordinal());
                assertEquals(7L + counter.ordinal(), counter.valueIn(countersManager));
                counterId++;
            }
            assertEquals(counterId, nextFreeId(countersManager), "nothing else allocated");
        }
    }

    private static int keyInt(final CountersReader reader, final int counterId)
    {
        return reader.metaDataBuffer().getInt(CountersReader.metaDataOffset(counterId) + CountersReader.KEY_OFFSET);
    }

    private static int nextFreeId(final CountersManager countersManager)
    {
        final int id = countersManager.allocate("probe");
        countersManager.free(id);
        return id;
    }
}
