package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.transfer.TransportCounter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;

/**
 * The counters section as the Manager fills it (system counters, then the peer transport's), as external readers
 * ({@code orbitkv stat}, /metrics, dashboards) rely on it: every system counter at its fixed id with that id as its
 * key, every id between them held by a reserved placeholder, the peer counters after them in declaration order with
 * their own type ids and no key; and a reader finds each counter again by its descriptor. Every counter's id, type,
 * kind and label also stay those of a golden list ({@code counter-layout.txt}).
 */
class CounterLayoutTest
{
    /** Every counter as {@code <fixed id or -> <type id> <gauge|count> <label>}, one per line. */
    private static final String GOLDEN = "counter-layout.txt";

    @Test
    void shouldLayOutSystemThenPeerCountersAndFindEachByItsDescriptor()
    {
        final int valuesLength = 512 * CountersReader.COUNTER_LENGTH;
        final CountersManager countersManager = new CountersManager(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength * 4, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength, 64)),
            StandardCharsets.US_ASCII);
        try (SystemCounters system = SystemCounterFamilies.allocate(countersManager);
            PeerCounters peer = new PeerCounters(countersManager))
        {
            final int lastSystemId = SystemCounterFamilies.descriptors().mapToInt(CounterDescriptor::fixedId).max()
                .orElseThrow();
            for (int id = 0; id <= lastSystemId; id++)
            {
                final CounterDescriptor descriptor = system.descriptor(id);
                if (null == descriptor)
                {
                    assertEquals(SystemCounters.RESERVED_COUNTER_TYPE_ID, countersManager.getCounterTypeId(id));
                    assertEquals("Reserved system counter id " + id, countersManager.getCounterLabel(id));
                    continue;
                }
                assertEquals(id, descriptor.fixedId());
                assertEquals(SystemCounters.SYSTEM_COUNTER_TYPE_ID, countersManager.getCounterTypeId(id));
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

    @Test
    void shouldRefuseTwoFamiliesHoldingOneId()
    {
        final CounterDescriptor[] ring = {RingCounter.REQUESTS_ATTACH};
        final CounterDescriptor[] impostor = {new Fixed(RingCounter.REQUESTS_ATTACH.fixedId())};
        final IllegalArgumentException error =
            assertThrows(IllegalArgumentException.class, () -> SystemCounters.inMemory(ring, impostor));
        assertTrue(error.getMessage().contains("counter id 0 held by"), error.getMessage());
    }

    @Test
    void shouldRefuseASystemCounterWithoutAFixedId()
    {
        final CounterDescriptor[] family = {new Fixed(CounterDescriptor.NO_FIXED_ID)};
        assertThrows(IllegalArgumentException.class, () -> SystemCounters.inMemory(family));
    }

    private record Fixed(int fixedId) implements CounterDescriptor
    {
        public int typeId()
        {
            return SystemCounters.SYSTEM_COUNTER_TYPE_ID;
        }

        public String label()
        {
            return "impostor";
        }
    }

    @Test
    void shouldKeepEveryCounterIdTypeKindAndLabelOfTheGoldenList() throws IOException
    {
        // Sorted by fixed id, then type id: a descriptor may move to another family, its counter may not change.
        final List<CounterDescriptor> all = new ArrayList<>();
        SystemCounterFamilies.descriptors().forEach(all::add);
        Stream.of(PeerCounter.values(), TransportCounter.values()).forEach(family -> all.addAll(List.of(family)));
        all.sort(Comparator.comparingInt(CounterDescriptor::fixedId).thenComparingInt(CounterDescriptor::typeId));
        final StringBuilder layout = new StringBuilder();
        for (final CounterDescriptor descriptor : all)
        {
            layout.append(CounterDescriptor.NO_FIXED_ID == descriptor.fixedId() ? "-" : descriptor.fixedId())
                .append(' ').append(descriptor.typeId())
                .append(' ').append(descriptor.isGauge() ? "gauge" : "count")
                .append(' ').append(descriptor.label())
                .append('\n');
        }

        final String expected;
        try (InputStream in = CounterLayoutTest.class.getResourceAsStream(GOLDEN))
        {
            assertNotNull(in, GOLDEN);
            expected = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!expected.contentEquals(layout))
        {
            // For a diff against the golden list.
            Files.writeString(Path.of("target", "counter-layout.actual"), layout);
        }
        assertEquals(expected, layout.toString());
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
