package io.orbitkv.client;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.AttachRequestDecoder;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CopyOnWriteArrayList;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * Just enough of a Manager to exercise the client against the CnC contract without the server: attach (with a
 * name that is always taken), lookup and read (resident up to a configurable number of keys over the whole chain; a
 * read answers no bytes) and detach. Runs its duty cycle on its own thread.
 */
final class FakeManager implements AutoCloseable
{
    static final String TAKEN_NAME = "taken";

    final Path dir;
    final CncFileDescriptor.Sections sections;
    final ManyToOneRingBuffer requestRing;
    final CopyOnWriteArrayList<Integer> lookupKeyCounts = new CopyOnWriteArrayList<>();
    volatile boolean heartbeating = true;
    volatile boolean answering = true;
    private volatile long dutyCycles;
    volatile int residentKeys = Integer.MAX_VALUE;
    /** With the peers flag: keys after the local prefix answered PEER, each with two candidates on two owners. */
    volatile int peerKeys;
    final CopyOnWriteArrayList<Integer> lookupFlags = new CopyOnWriteArrayList<>();
    /** Read with the peers flag: the key after the peer keys fails with this reason (null: it is a MISS). */
    volatile FailureReason peerFailure;
    final CopyOnWriteArrayList<Integer> readFlags = new CopyOnWriteArrayList<>();
    private int lookupKeysSeen;
    private int readKeysSeen;
    private final Arena arena = Arena.ofShared();
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(new byte[64 * 1024]);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final AttachRequestDecoder attachDecoder = new AttachRequestDecoder();
    private final LookupRequestDecoder lookupDecoder = new LookupRequestDecoder();
    private final ReadRequestDecoder readDecoder = new ReadRequestDecoder();
    private final ResponseEncoder responseEncoder = new ResponseEncoder();
    private final Thread thread;
    private volatile boolean running = true;

    FakeManager(final Path dir, final long clientLivenessNs, final boolean start) throws IOException
    {
        this.dir = dir;
        Files.createDirectories(dir.resolve(CncFileDescriptor.CLIENTS_DIR_NAME));
        makeDoorbell(dir.resolve(CncFileDescriptor.DOORBELL_FILE_NAME));
        final CncFileDescriptor.Lengths lengths = new CncFileDescriptor.Lengths(1 << 20, 2, 1 << 16, 1024, 4096);
        final Path cnc = dir.resolve(CncFileDescriptor.CNC_FILE_NAME);
        final long fileLength = CncFileDescriptor.fileLength(lengths);
        try (FileChannel channel = FileChannel.open(
            cnc, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final MemorySegment segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, fileLength, arena);
            final UnsafeBuffer header = new UnsafeBuffer(segment.address(), CncFileDescriptor.HEADER_LENGTH);
            CncFileDescriptor.fillHeader(header, lengths, ProcessHandle.current().pid(), System.currentTimeMillis(),
                1, 2, clientLivenessNs, 512, 64 * 1024, 1 << 20, 1 << 20);
            sections = new CncFileDescriptor.Sections(segment.address(), fileLength);
            requestRing = new ManyToOneRingBuffer(sections.requestRing());
            requestRing.consumerHeartbeatTime(System.currentTimeMillis());
            CncFileDescriptor.signalReady(header);
        }
        thread = new Thread(this::run, "fake-manager");
        thread.setDaemon(true);
        if (start)
        {
            thread.start();
        }
    }

    int slotState(final int slot)
    {
        return sections.slotTable().getIntVolatile(
            CncFileDescriptor.Sections.slotOffset(slot) + CncFileDescriptor.SLOT_STATE_OFFSET);
    }

    long claimPid(final int slot)
    {
        return sections.slotTable().getLongVolatile(
            CncFileDescriptor.Sections.slotOffset(slot) + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET);
    }

    void stealSlot(final int slot)
    {
        sections.slotTable().putLongVolatile(
            CncFileDescriptor.Sections.slotOffset(slot) + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, (7L << 32) | slot);
    }

    private void run()
    {
        while (running)
        {
            if (heartbeating)
            {
                requestRing.consumerHeartbeatTime(System.currentTimeMillis());
            }
            if (answering)
            {
                requestRing.read(this::onRequest, 16);
            }
            dutyCycles++;
            Thread.onSpinWait();
        }
    }

    /**
     * Wait until a whole duty cycle has run after the caller changed a flag, so a read that started before the change
     * cannot answer a request sent after it.
     */
    void awaitFlagsSeen()
    {
        final long target = dutyCycles + 2;
        while (running && dutyCycles < target)
        {
            Thread.onSpinWait();
        }
    }

    private void onRequest(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        headerDecoder.wrap(buffer, index);
        switch (headerDecoder.templateId())
        {
            case AttachRequestDecoder.TEMPLATE_ID ->
            {
                attachDecoder.wrapAndApplyHeader(buffer, index, headerDecoder);
                final int slot = attachDecoder.slotIndex();
                final long correlationId = attachDecoder.correlationId();
                final long dataRegionBytes = attachDecoder.dataRegionBytes();
                final String name = attachDecoder.clientName();
                if (TAKEN_NAME.equals(name))
                {
                    respond(slot, 0, correlationId, StatusCode.NAME_IN_USE, 0, 0, "name in use: " + name);
                    return;
                }
                final int slotOffset = CncFileDescriptor.Sections.slotOffset(slot);
                final int generation = sections.slotTable().getInt(slotOffset + CncFileDescriptor.SLOT_GENERATION_OFFSET) + 1;
                final long clientId = ((long)generation << 32) | slot;
                final Path region = dir.resolve(CncFileDescriptor.CLIENTS_DIR_NAME).resolve(slot + "-" + generation + ".data");
                try (RandomAccessFile file = new RandomAccessFile(region.toFile(), "rw"))
                {
                    file.setLength(dataRegionBytes);
                }
                catch (final IOException ex)
                {
                    throw new IllegalStateException(ex);
                }
                sections.slotTable().putInt(slotOffset + CncFileDescriptor.SLOT_GENERATION_OFFSET, generation);
                sections.slotTable().putLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, clientId);
                sections.slotTable().putIntVolatile(slotOffset + CncFileDescriptor.SLOT_STATE_OFFSET,
                    CncFileDescriptor.SLOT_ATTACHED);
                respond(slot, clientId, correlationId, StatusCode.OK, clientId, 0, region.toAbsolutePath().toString());
            }
            case LookupRequestDecoder.TEMPLATE_ID ->
            {
                lookupDecoder.wrapAndApplyHeader(buffer, index, headerDecoder);
                final long clientId = lookupDecoder.clientId();
                final int slot = (int)clientId;
                final int count = lookupDecoder.keys().count();
                lookupKeyCounts.add(count);
                lookupFlags.add(lookupDecoder.flags().getRaw() & 0xFF);
                final int prefix = Math.max(0, Math.min(count, residentKeys - lookupKeysSeen));
                lookupKeysSeen += count;
                final ResponseEncoder encoder = responseEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
                    .clientId(clientId)
                    .correlationId(lookupDecoder.correlationId())
                    .requestTemplateId(LookupRequestDecoder.TEMPLATE_ID)
                    .code(StatusCode.OK)
                    .value(prefix)
                    .leaseId(lookupDecoder.flags().pin() ? 1000 + lookupKeyCounts.size() : 0);
                // A Manager writes these answers at version 3 at most: no slots group.
                headerEncoder.version(3);
                final int peerEnd = lookupDecoder.flags().peers() ? Math.min(count, prefix + peerKeys) : prefix;
                final ResponseEncoder.KeysEncoder keys = encoder.keysCount(count);
                for (int i = 0; i < count; i++)
                {
                    keys.next()
                        .status(i < prefix ? KeyStatus.DRAM : i < peerEnd ? KeyStatus.PEER :
                            i == peerEnd ? KeyStatus.MISS : KeyStatus.NOT_ATTEMPTED)
                        .length(i < prefix ? 4096 : 0);
                }
                final int owners = peerEnd > prefix ? 2 : 0;
                final ResponseEncoder.OwnersEncoder ownerRows = encoder.ownersCount(owners);
                for (int o = 0; o < owners; o++)
                {
                    ownerRows.next().runtimeUuidMsb(100 + o).runtimeUuidLsb(200 + o).nodeId("peer-" + o);
                }
                final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount((peerEnd - prefix) * owners);
                for (int i = prefix; i < peerEnd; i++)
                {
                    for (int o = 0; o < owners; o++)
                    {
                        candidates.next()
                            .keyIndex(i)
                            .ownerIndex(o)
                            .tier(0 == o ? KeyStatus.DRAM : KeyStatus.SSD)
                            .insertionSequence(1000L * i + o)
                            .length(4096 + i);
                    }
                }
                encoder.message("");
                write(slot, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
            }
            case ReadRequestDecoder.TEMPLATE_ID ->
            {
                readDecoder.wrapAndApplyHeader(buffer, index, headerDecoder);
                final long clientId = readDecoder.clientId();
                final boolean peers = readDecoder.flags().peers();
                readFlags.add(readDecoder.flags().getRaw() & 0xFF);
                final int count = readDecoder.keys().count();
                final int first = readKeysSeen;
                readKeysSeen += count;
                final int prefix = Math.max(0, Math.min(count, residentKeys - first));
                final int peerEnd = peers ? Math.max(prefix, Math.min(count, residentKeys + peerKeys - first)) : prefix;
                final FailureReason failure = peers ? peerFailure : null;
                final ResponseEncoder encoder = responseEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
                    .clientId(clientId)
                    .correlationId(readDecoder.correlationId())
                    .requestTemplateId(ReadRequestDecoder.TEMPLATE_ID)
                    .code(StatusCode.OK)
                    .value(peerEnd)
                    .leaseId(0);
                // A Manager writes these answers at version 3 at most: no slots group.
                headerEncoder.version(3);
                final ResponseEncoder.KeysEncoder keys = encoder.keysCount(count);
                for (int i = 0; i < count; i++)
                {
                    final boolean stop = i == peerEnd;
                    keys.next()
                        .status(i < prefix ? KeyStatus.DRAM : i < peerEnd ? KeyStatus.PEER :
                            stop ? (null == failure ? KeyStatus.MISS : KeyStatus.FAILED) : KeyStatus.NOT_ATTEMPTED)
                        .length(i < peerEnd ? 4096 : 0)
                        .reason(stop && null != failure ? failure : FailureReason.NONE);
                }
                final int owners = peerEnd > prefix ? 1 : 0;
                final ResponseEncoder.OwnersEncoder ownerRows = encoder.ownersCount(owners);
                for (int o = 0; o < owners; o++)
                {
                    ownerRows.next().runtimeUuidMsb(300).runtimeUuidLsb(400).nodeId("source");
                }
                final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount(peerEnd - prefix);
                for (int i = prefix; i < peerEnd; i++)
                {
                    candidates.next().keyIndex(i).ownerIndex(0).tier(KeyStatus.DRAM).insertionSequence(first + i).length(4096);
                }
                encoder.message("");
                write((int)clientId, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
            }
            case io.orbitkv.codecs.engine.DetachRequestDecoder.TEMPLATE_ID ->
            {
                final io.orbitkv.codecs.engine.DetachRequestDecoder detach =
                    new io.orbitkv.codecs.engine.DetachRequestDecoder().wrapAndApplyHeader(buffer, index, headerDecoder);
                final int slot = (int)detach.clientId();
                respond(slot, detach.clientId(), detach.correlationId(), StatusCode.OK, 0, 0, "");
                final int slotOffset = CncFileDescriptor.Sections.slotOffset(slot);
                sections.slotTable().putIntVolatile(slotOffset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_FREE);
                sections.slotTable().putLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, 0);
                sections.slotTable().putLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, 0);
            }
            default ->
            {
            }
        }
    }

    private void respond(
        final int slot,
        final long clientId,
        final long correlationId,
        final StatusCode code,
        final long value,
        final long leaseId,
        final String message)
    {
        final ResponseEncoder encoder = responseEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId)
            .requestTemplateId(0)
            .code(code)
            .value(value)
            .leaseId(leaseId);
        // A Manager writes these answers at version 3 at most: no slots group.
        headerEncoder.version(3);
        encoder.keysCount(0);
        encoder.ownersCount(0);
        encoder.candidatesCount(0);
        encoder.message(message);
        write(slot, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private void write(final int slot, final int length)
    {
        if (!new OneToOneRingBuffer(sections.responseRing(slot)).write(ResponseEncoder.TEMPLATE_ID, sendBuffer, 0, length))
        {
            throw new IllegalStateException("response ring full");
        }
    }

    public void close() throws InterruptedException
    {
        running = false;
        if (thread.isAlive())
        {
            thread.join();
        }
        arena.close();
    }

    /**
     * The doorbell FIFO a layout-version-2 Manager creates; the client opens it at attach. Nothing reads it here: a
     * fake Manager never sleeps, so clients never ring.
     */
    private static void makeDoorbell(final Path fifo) throws IOException
    {
        Files.deleteIfExists(fifo);
        try
        {
            final Process mkfifo = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).inheritIO().start();
            if (0 != mkfifo.waitFor())
            {
                throw new IOException("mkfifo " + fifo + " exited with " + mkfifo.exitValue());
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted creating " + fifo, ex);
        }
    }
}
