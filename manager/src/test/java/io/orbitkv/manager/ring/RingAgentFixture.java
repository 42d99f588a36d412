package io.orbitkv.manager.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.HeartbeatRequestEncoder;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.RequestFrames;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.FileChannelSsdBackend;
import io.orbitkv.manager.store.SsdTier;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.MappedRegion;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.errors.ErrorLogReader;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.CountersManager;

/**
 * A ring agent built from a concluded context over an in-memory CnC layout, with cached clocks the test advances,
 * and engines that speak the slot protocol and the SBE frames by hand. Errors reported to the agent's error
 * handler fail the test at {@link #close()}.
 */
final class RingAgentFixture implements AutoCloseable
{
    static final int COPY_CHUNK_BYTES = 64 * 1024;
    static final long SSD_BYTES = 8L << 20;
    private static final long START_NS = TimeUnit.SECONDS.toNanos(1_000);
    private static final long START_MS = 1_700_000_000_000L;
    private static final int MAX_CYCLES = 1_000;

    private final CachedNanoClock nanoClock = new CachedNanoClock();
    private final CachedEpochClock epochClock = new CachedEpochClock();
    private final ManagerContext ctx;
    private final Arena arena = Arena.ofShared();
    private final ByteBuffer cnc;
    private final CncFileDescriptor.Sections sections;
    private final SystemCounters counters;
    private final DistinctErrorLog errorLog;
    private final List<Throwable> errors = new ArrayList<>();
    private final EngineRingAgent agent;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private MappedRegion stagingRegion;
    private boolean closed;

    RingAgentFixture(final File dir, final long clientTimeoutNs)
    {
        this(dir, clientTimeoutNs, null);
    }

    /**
     * @param ssdAdmission with an SSD tier (FileChannel backend, files under {@code dir}) admitting this way, or
     *                     null for DRAM only.
     */
    RingAgentFixture(final File dir, final long clientTimeoutNs, final Configuration.SsdAdmission ssdAdmission)
    {
        nanoClock.update(START_NS);
        epochClock.update(START_MS);
        final ManagerContext context = new ManagerContext();
        if (null != ssdAdmission)
        {
            context.ssdDir(new File(dir, "ssd"))
                .ssdBytes(SSD_BYTES)
                .ssdStagingBytes(2L << 20)
                .ssdAdmission(ssdAdmission)
                .ssdBackend(Configuration.SsdBackendChoice.FILECHANNEL);
        }
        ctx = context
            .name("ring-agent-test")
            .dir(dir)
            .poolBytes(4L << 20)
            .maxClients(4)
            .clientTimeoutNs(clientTimeoutNs)
            .maxDataRegionBytes(16L << 20)
            .copyChunkBytes(COPY_CHUNK_BYTES)
            .nanoClock(nanoClock)
            .epochClock(epochClock)
            .conclude();
        if (!ctx.clientsDir().mkdirs())
        {
            throw new IllegalStateException("cannot create " + ctx.clientsDir());
        }

        final CncFileDescriptor.Lengths lengths = new CncFileDescriptor.Lengths(
            ctx.requestRingBytes(), ctx.maxClients(), ctx.responseRingBytes(), ctx.countersValuesBytes(),
            ctx.errorLogBytes());
        final long fileLength = CncFileDescriptor.fileLength(lengths);
        cnc = BufferUtil.allocateDirectAligned((int)fileLength, CncFileDescriptor.SECTION_ALIGNMENT);
        final long address = BufferUtil.address(cnc);
        CncFileDescriptor.fillHeader(
            new UnsafeBuffer(address, CncFileDescriptor.HEADER_LENGTH), lengths, ProcessHandle.current().pid(),
            START_MS, 1L, 2L, clientTimeoutNs, 128, 64 * 1024, ctx.maxDataRegionBytes(), ctx.poolBytes());
        sections = new CncFileDescriptor.Sections(address, fileLength);
        counters = SystemCounterFamilies.allocate(new CountersManager(
            sections.countersMetadata(), sections.countersValues(), StandardCharsets.US_ASCII));
        errorLog = new DistinctErrorLog(sections.errorLog(), epochClock, StandardCharsets.US_ASCII);

        final MemorySegment pool = arena.allocate(ctx.poolBytes(), 4096);
        final SsdTier ssd = null == ssdAdmission ? null : openSsdTier(pool);
        store = new TieredStore(ctx, pool, ssd, counters, BlockStore.NO_OP_OBSERVER);
        namespaces = new NamespaceTable(ctx.maxNamespaces());
        agent = new EngineRing(ctx, sections, store, namespaces, counters, errors::add, errorLog).newAgent();
        agent.onStart();
    }

    private SsdTier openSsdTier(final MemorySegment pool)
    {
        if (!ctx.ssdDir().mkdirs())
        {
            throw new IllegalStateException("cannot create " + ctx.ssdDir());
        }
        final File file = new File(ctx.ssdDir(), "tier.ssd");
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw"))
        {
            raf.setLength(ctx.ssdBytes());
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
        stagingRegion = HugePageMemory.mapAnonymous(ctx.ssdStagingBytes(), false);
        final FileChannelSsdBackend backend = new FileChannelSsdBackend(
            file.toPath(), ctx.ssdQueueDepth(), stagingRegion, "test");
        return new SsdTier(
            ctx, file.toPath(), backend, stagingRegion, pool, counters, BlockStore.NO_OP_OBSERVER, errors::add, System.err);
    }

    EngineRingAgent agent()
    {
        return agent;
    }

    /** The agent's store; the test thread drives the agent, so reading it between duty cycles is safe. */
    TieredStore store()
    {
        return store;
    }

    /** The id the agent registered a namespace under, negative if it has not seen it. */
    int namespaceId(final String namespace)
    {
        final UnsafeBuffer name = new UnsafeBuffer(namespace.getBytes(StandardCharsets.US_ASCII));
        return namespaces.lookup(name, 0, name.capacity());
    }

    /** The READY residence of a key as the agent's store has it, DRAM first. */
    long residence(final String namespace, final byte[] hash)
    {
        return store.findReady(namespaceId(namespace), new UnsafeBuffer(hash), 0, hash.length);
    }

    CncFileDescriptor.Sections sections()
    {
        return sections;
    }

    long counter(final CounterDescriptor descriptor)
    {
        return counters.get(descriptor).get();
    }

    int doWork()
    {
        return agent.doWork();
    }

    void advanceNs(final long deltaNs)
    {
        nanoClock.advance(deltaNs);
        epochClock.advance(TimeUnit.NANOSECONDS.toMillis(deltaNs));
    }

    /**
     * Let a millisecond pass and run one duty cycle, so housekeeping runs and the gauges are current.
     */
    void housekeeping()
    {
        advanceNs(TimeUnit.MILLISECONDS.toNanos(1));
        doWork();
    }

    long epochMs()
    {
        return epochClock.time();
    }

    Engine engine(final long pid)
    {
        return new Engine(pid);
    }

    static byte[] hash(final int i)
    {
        final byte[] hash = new byte[32];
        for (int b = 0; b < hash.length; b++)
        {
            hash[b] = (byte)(i * 131 + b * 17);
        }
        hash[0] = (byte)(i >>> 8);
        hash[1] = (byte)i;
        return hash;
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        agent.onClose();
        arena.close();
        if (null != stagingRegion)
        {
            stagingRegion.close();
        }
        if (!errors.isEmpty())
        {
            final AssertionError failure = new AssertionError("the agent reported errors: " + errors);
            errors.forEach(failure::addSuppressed);
            throw failure;
        }
    }

    /**
     * Every rejection the agent recorded, as the distinct error log holds them.
     *
     * @return the log's text.
     */
    String errorLogText()
    {
        final StringBuilder text = new StringBuilder();
        ErrorLogReader.read(sections.errorLog(), (count, first, last, encoded) -> text.append(encoded).append('\n'));
        return text.toString();
    }

    /** A decoded Response. */
    record Reply(
        long clientId, long correlationId, int requestTemplateId, StatusCode code, long value, long leaseId,
        KeyStatus[] statuses, int[] lengths, String message, int peerEntries)
    {
    }

    /**
     * An engine speaking the slot protocol and hand-encoded frames.
     */
    final class Engine implements AutoCloseable
    {
        private final long pid;
        private final UnsafeBuffer frame = new UnsafeBuffer(BufferUtil.allocateDirectAligned(128 * 1024, 64));
        private final ManyToOneRingBuffer requestRing = new ManyToOneRingBuffer(sections.requestRing());
        private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
        private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
        private final ResponseDecoder responseDecoder = new ResponseDecoder();
        private final List<Reply> pending = new ArrayList<>();
        private final Arena regionArena = Arena.ofShared();
        private int slotIndex = -1;
        private OneToOneRingBuffer responseRing;
        private long clientId;
        private long nextCorrelationId = 1;
        private MemorySegment region;

        private Engine(final long pid)
        {
            this.pid = pid;
        }

        int slotIndex()
        {
            return slotIndex;
        }

        int claimSlot()
        {
            for (int i = 0; i < sections.maxClients(); i++)
            {
                final int offset = CncFileDescriptor.Sections.slotOffset(i);
                if (sections.slotTable().compareAndSetLong(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, 0, pid))
                {
                    sections.slotTable().putLong(offset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET, epochMs());
                    sections.slotTable().putIntRelease(
                        offset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_CLAIMED);
                    useSlot(i);
                    return i;
                }
            }
            return fail("no free slot");
        }

        /** Write frames naming a slot without claiming it (an impostor's view). */
        void useSlot(final int slot)
        {
            slotIndex = slot;
            responseRing = new OneToOneRingBuffer(sections.responseRing(slot));
        }

        long claimPid()
        {
            return sections.slotTable().getLongVolatile(
                CncFileDescriptor.Sections.slotOffset(slotIndex) + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET);
        }

        long sendAttach(final String name, final long dataRegionBytes)
        {
            final long correlationId = nextCorrelationId++;
            send(RequestFrames.attach(frame, headerEncoder, correlationId, slotIndex, pid, dataRegionBytes, name));
            return correlationId;
        }

        long attachOrFail(final String name, final long dataRegionBytes)
        {
            claimSlot();
            final Reply reply = awaitReply(sendAttach(name, dataRegionBytes));
            assertEquals(StatusCode.OK, reply.code(), () -> "attach failed: " + reply);
            clientId = reply.value();
            try (RandomAccessFile file = new RandomAccessFile(reply.message(), "rw");
                FileChannel channel = file.getChannel())
            {
                region = channel.map(FileChannel.MapMode.READ_WRITE, 0, dataRegionBytes, regionArena);
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
            return clientId;
        }

        void fill(final long offset, final int length, final long seed)
        {
            for (int i = 0; i < length; i++)
            {
                region.set(ValueLayout.JAVA_BYTE, offset + i, pattern(seed, i));
            }
        }

        boolean matches(final long offset, final int length, final long seed)
        {
            for (int i = 0; i < length; i++)
            {
                if (region.get(ValueLayout.JAVA_BYTE, offset + i) != pattern(seed, i))
                {
                    return false;
                }
            }
            return true;
        }

        long sendPublish(final String namespace, final long[] offsets, final int[] lengths, final byte[][] hashes)
        {
            final long correlationId = nextCorrelationId++;
            send(RequestFrames.publish(frame, headerEncoder, clientId, correlationId, namespace, offsets, lengths, hashes));
            return correlationId;
        }

        long sendLookup(final String namespace, final int flags, final byte[][] hashes)
        {
            final long correlationId = nextCorrelationId++;
            send(RequestFrames.lookup(frame, headerEncoder, clientId, correlationId, namespace, flags, hashes));
            return correlationId;
        }

        long sendRead(
            final String namespace,
            final long leaseId,
            final long[] dstOffsets,
            final int[] capacities,
            final byte[][] hashes)
        {
            return sendRead(namespace, leaseId, 0, dstOffsets, capacities, hashes);
        }

        long sendRead(
            final String namespace,
            final long leaseId,
            final int rawFlags,
            final long[] dstOffsets,
            final int[] capacities,
            final byte[][] hashes)
        {
            final long correlationId = nextCorrelationId++;
            send(RequestFrames.read(frame, headerEncoder, clientId, correlationId, namespace, leaseId, rawFlags,
                dstOffsets, capacities, hashes));
            return correlationId;
        }

        long sendRelease(final long leaseId)
        {
            final long correlationId = nextCorrelationId++;
            send(RequestFrames.release(frame, headerEncoder, clientId, correlationId, leaseId));
            return correlationId;
        }

        long sendDetach()
        {
            final long correlationId = nextCorrelationId++;
            send(RequestFrames.detach(frame, headerEncoder, clientId, correlationId));
            return correlationId;
        }

        void sendHeartbeat()
        {
            final HeartbeatRequestEncoder encoder = new HeartbeatRequestEncoder();
            encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(nextCorrelationId++);
            send(MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
        }

        private void send(final int length)
        {
            if (!requestRing.write(1, frame, 0, length))
            {
                fail("request ring full");
            }
        }

        /**
         * The reply with this correlation id, which must already be in the response ring.
         */
        Reply takeReply(final long correlationId)
        {
            final Reply reply = poll(correlationId);
            return null != reply ? reply : fail("no reply for correlation id " + correlationId + " in " + pending);
        }

        /**
         * Run duty cycles until the reply with this correlation id arrives.
         */
        Reply awaitReply(final long correlationId)
        {
            for (int i = 0; i < MAX_CYCLES; i++)
            {
                doWork();
                final Reply reply = poll(correlationId);
                if (null != reply)
                {
                    return reply;
                }
            }
            return fail("no reply for correlation id " + correlationId + " after " + MAX_CYCLES + " duty cycles");
        }

        List<Reply> drainReplies()
        {
            responseRing.read((msgTypeId, buffer, index, length) -> pending.add(decode(buffer, index)));
            final List<Reply> replies = new ArrayList<>(pending);
            pending.clear();
            return replies;
        }

        Reply poll(final long correlationId)
        {
            responseRing.read((msgTypeId, buffer, index, length) -> pending.add(decode(buffer, index)));
            for (int i = 0; i < pending.size(); i++)
            {
                if (pending.get(i).correlationId() == correlationId)
                {
                    return pending.remove(i);
                }
            }
            return null;
        }

        private Reply decode(final DirectBuffer buffer, final int index)
        {
            responseDecoder.wrapAndApplyHeader(buffer, index, headerDecoder);
            final long cid = responseDecoder.clientId();
            final long correlationId = responseDecoder.correlationId();
            final int templateId = responseDecoder.requestTemplateId();
            final StatusCode code = responseDecoder.code();
            final long value = responseDecoder.value();
            final long leaseId = responseDecoder.leaseId();
            final ResponseDecoder.KeysDecoder keys = responseDecoder.keys();
            final KeyStatus[] statuses = new KeyStatus[keys.count()];
            final int[] lengths = new int[keys.count()];
            for (int i = 0; i < statuses.length; i++)
            {
                keys.next();
                statuses[i] = keys.status();
                lengths[i] = keys.length();
            }
            // Groups are read in schema order to reach the message; the peer groups are empty here.
            final ResponseDecoder.OwnersDecoder owners = responseDecoder.owners();
            while (owners.hasNext())
            {
                owners.next().skipNodeId();
            }
            final ResponseDecoder.CandidatesDecoder candidates = responseDecoder.candidates();
            final int peerEntries = owners.count() + candidates.count();
            while (candidates.hasNext())
            {
                candidates.next();
            }
            return new Reply(cid, correlationId, templateId, code, value, leaseId, statuses, lengths,
                responseDecoder.message(), peerEntries);
        }

        public void close()
        {
            regionArena.close();
        }
    }

    static byte pattern(final long seed, final int i)
    {
        return (byte)((seed * 31 + i * 7 + (i >>> 8)) & 0xFF);
    }
}
