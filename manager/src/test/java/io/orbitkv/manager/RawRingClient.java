package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.HeartbeatRequestEncoder;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * A deliberately low-level engine for tests: it claims slots, hand-encodes SBE frames (well-formed or not) onto the
 * request ring and decodes responses from its ring, exactly as an engine in another process would, without the
 * engine-client library.
 */
final class RawRingClient implements AutoCloseable
{
    static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(10);

    private final MappedByteBuffer cnc;
    private final CncFileDescriptor.Sections sections;
    private final ManyToOneRingBuffer requestRing;
    private final io.orbitkv.client.ManagerDoorbell doorbell;
    private final UnsafeBuffer frame = new UnsafeBuffer(BufferUtil.allocateDirectAligned(256 * 1024, 64));
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ResponseDecoder responseDecoder = new ResponseDecoder();
    private final long pid;
    private final List<Reply> pending = new ArrayList<>();

    private int slotIndex = -1;
    private OneToOneRingBuffer responseRing;
    private long clientId;
    private long nextCorrelationId = 1;
    private Arena regionArena;
    private MemorySegment region;
    private String regionPath;

    RawRingClient(final File cncFile)
    {
        this(cncFile, ProcessHandle.current().pid());
    }

    RawRingClient(final File cncFile, final long pid)
    {
        this.pid = pid;
        cnc = IoUtil.mapExistingFile(cncFile, "cnc");
        final UnsafeBuffer header = new UnsafeBuffer(cnc, 0, CncFileDescriptor.HEADER_LENGTH);
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (CncFileDescriptor.layoutVersion(header) != CncFileDescriptor.LAYOUT_VERSION)
        {
            if (System.nanoTime() > deadline)
            {
                fail("CnC file never became ready");
            }
            Thread.onSpinWait();
        }
        sections = new CncFileDescriptor.Sections(BufferUtil.address(cnc), cnc.capacity());
        requestRing = new ManyToOneRingBuffer(sections.requestRing());
        try
        {
            // Raw frames wake a sleeping Manager as an engine's requests do, or each would wait for its timer.
            doorbell = io.orbitkv.client.ManagerDoorbell.open(cncFile.getAbsoluteFile().toPath().getParent(),
                sections.header());
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** A decoded response; {@code version} is the schema version in its header, then the peer group sizes. */
    record Reply(
        long clientId, long correlationId, int requestTemplateId, StatusCode code, long value, long leaseId,
        List<KeyStatus> statuses, List<Integer> lengths, String message, int version, int owners, int candidates,
        List<FailureReason> reasons)
    {
    }

    CncFileDescriptor.Sections sections()
    {
        return sections;
    }

    long clientId()
    {
        return clientId;
    }

    /** Overrides the client id stamped on requests, e.g. to impersonate a detached client. */
    void clientId(final long clientId)
    {
        this.clientId = clientId;
    }

    int slotIndex()
    {
        return slotIndex;
    }

    MemorySegment region()
    {
        return region;
    }

    String regionPath()
    {
        return regionPath;
    }

    long nextCorrelationId()
    {
        return nextCorrelationId++;
    }

    /**
     * Claim the first free slot as the engine protocol says: CAS claimPid 0 -> pid, then claim time and state.
     *
     * @return the slot index.
     */
    int claimSlot()
    {
        for (int i = 0; i < sections.maxClients(); i++)
        {
            final int offset = CncFileDescriptor.Sections.slotOffset(i);
            if (sections.slotTable().compareAndSetLong(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, 0, pid))
            {
                sections.slotTable().putLong(offset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET, System.currentTimeMillis());
                sections.slotTable().putIntRelease(offset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_CLAIMED);
                slotIndex = i;
                responseRing = new OneToOneRingBuffer(sections.responseRing(i));
                return i;
            }
        }
        fail("no free slot");
        return -1;
    }

    long claimPid(final int slot)
    {
        return sections.slotTable().getLongVolatile(
            CncFileDescriptor.Sections.slotOffset(slot) + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET);
    }

    Reply attach(final String name, final long dataRegionBytes)
    {
        if (slotIndex < 0)
        {
            claimSlot();
        }
        final long correlationId = nextCorrelationId();
        send(RequestFrames.attach(frame, headerEncoder, correlationId, slotIndex, pid, dataRegionBytes, name));
        final Reply reply = awaitReply(correlationId);
        if (StatusCode.OK == reply.code())
        {
            clientId = reply.value();
            regionPath = reply.message();
            mapRegion(regionPath, dataRegionBytes);
        }
        return reply;
    }

    Reply attachOrFail(final String name, final long dataRegionBytes)
    {
        final Reply reply = attach(name, dataRegionBytes);
        assertEquals(StatusCode.OK, reply.code(), () -> "attach failed: " + reply);
        return reply;
    }

    private void mapRegion(final String path, final long bytes)
    {
        regionArena = Arena.ofShared();
        try (RandomAccessFile file = new RandomAccessFile(path, "rw"); FileChannel channel = file.getChannel())
        {
            region = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, regionArena);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    void fill(final long offset, final int length, final long seed)
    {
        for (int i = 0; i < length; i++)
        {
            region.set(ValueLayout.JAVA_BYTE, offset + i, (byte)((seed * 31 + i * 7 + (i >>> 8)) & 0xFF));
        }
    }

    boolean matches(final long offset, final int length, final long seed)
    {
        for (int i = 0; i < length; i++)
        {
            if (region.get(ValueLayout.JAVA_BYTE, offset + i) != (byte)((seed * 31 + i * 7 + (i >>> 8)) & 0xFF))
            {
                return false;
            }
        }
        return true;
    }

    static byte[] hash(final int i)
    {
        final byte[] hash = new byte[32];
        for (int b = 0; b < hash.length; b++)
        {
            hash[b] = (byte)(i * 131 + b * 17);
        }
        hash[0] = (byte)(i >>> 24);
        hash[1] = (byte)(i >>> 16);
        hash[2] = (byte)(i >>> 8);
        hash[3] = (byte)i;
        return hash;
    }

    long publish(final String namespace, final long[] offsets, final int[] lengths, final byte[][] hashes)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.publish(frame, headerEncoder, clientId, correlationId, namespace, offsets, lengths, hashes));
        return correlationId;
    }

    long publish(
        final String namespace,
        final long[] offsets,
        final int[] lengths,
        final byte[][] hashes,
        final byte[][] parents,
        final int[][] tokenIds)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.publish(frame, headerEncoder, clientId, correlationId, namespace, offsets, lengths, hashes,
            parents, tokenIds));
        return correlationId;
    }

    long prepare(final String namespace, final int[] lengths, final byte[][] hashes)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.prepare(frame, headerEncoder, clientId, correlationId, namespace, lengths, hashes));
        return correlationId;
    }

    long commit(final String namespace, final byte[][] hashes)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.commit(frame, headerEncoder, clientId, correlationId, namespace, hashes));
        return correlationId;
    }

    long lookup(final String namespace, final boolean pin, final byte[][] hashes)
    {
        return lookup(namespace, pin ? 1 : 0, hashes);
    }

    long lookup(final String namespace, final int rawFlags, final byte[][] hashes)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.lookup(frame, headerEncoder, clientId, correlationId, namespace, rawFlags, hashes));
        return correlationId;
    }

    long read(
        final String namespace, final long leaseId, final long[] dstOffsets, final int[] capacities, final byte[][] hashes)
    {
        return read(namespace, leaseId, 0, dstOffsets, capacities, hashes);
    }

    long read(
        final String namespace,
        final long leaseId,
        final int rawFlags,
        final long[] dstOffsets,
        final int[] capacities,
        final byte[][] hashes)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.read(
            frame, headerEncoder, clientId, correlationId, namespace, leaseId, rawFlags, dstOffsets, capacities, hashes));
        return correlationId;
    }

    long release(final long leaseId)
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.release(frame, headerEncoder, clientId, correlationId, leaseId));
        return correlationId;
    }

    void heartbeat()
    {
        final HeartbeatRequestEncoder encoder = new HeartbeatRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(nextCorrelationId());
        send(MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    Reply detach()
    {
        final long correlationId = nextCorrelationId();
        send(RequestFrames.detach(frame, headerEncoder, clientId, correlationId));
        return awaitReply(correlationId);
    }

    /**
     * The scratch frame, for tests that build or corrupt frames by hand.
     *
     * @return the frame buffer.
     */
    UnsafeBuffer frame()
    {
        return frame;
    }

    void send(final int length)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!requestRing.write(1, frame, 0, length))
        {
            if (System.nanoTime() > deadline)
            {
                fail("request ring full");
            }
            Thread.yield();
        }
        doorbell.wakeIfSleeping();
    }

    Reply awaitReply(final long correlationId)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (true)
        {
            responseRing.read((msgTypeId, buffer, index, length) -> pending.add(decode(buffer, index)));
            for (int i = 0; i < pending.size(); i++)
            {
                if (pending.get(i).correlationId() == correlationId)
                {
                    return pending.remove(i);
                }
            }
            if (System.nanoTime() > deadline)
            {
                fail("no reply for correlation id " + correlationId);
            }
            Thread.yield();
        }
    }

    /**
     * Read whatever responses are waiting right now.
     *
     * @return the replies.
     */
    List<Reply> drainReplies()
    {
        responseRing.read((msgTypeId, buffer, index, length) -> pending.add(decode(buffer, index)));
        final List<Reply> replies = new ArrayList<>(pending);
        pending.clear();
        return replies;
    }

    private Reply decode(final org.agrona.DirectBuffer buffer, final int index)
    {
        responseDecoder.wrapAndApplyHeader(buffer, index, headerDecoder);
        final long cid = responseDecoder.clientId();
        final long correlationId = responseDecoder.correlationId();
        final int templateId = responseDecoder.requestTemplateId();
        final StatusCode code = responseDecoder.code();
        final long value = responseDecoder.value();
        final long leaseId = responseDecoder.leaseId();
        final List<KeyStatus> statuses = new ArrayList<>();
        final List<Integer> lengths = new ArrayList<>();
        final List<FailureReason> reasons = new ArrayList<>();
        for (final ResponseDecoder.KeysDecoder keys : responseDecoder.keys())
        {
            statuses.add(keys.status());
            lengths.add(keys.length());
            reasons.add(keys.reason());
        }
        // the peer groups (schema version 2) come before the message; a version-1 answer reads them as empty
        int owners = 0;
        for (final ResponseDecoder.OwnersDecoder owner : responseDecoder.owners())
        {
            owner.skipNodeId();
            owners++;
        }
        int candidates = 0;
        for (final ResponseDecoder.CandidatesDecoder ignored : responseDecoder.candidates())
        {
            candidates++;
        }
        // a Prepare's answer (schema version 4) has its slots before the message
        for (final ResponseDecoder.SlotsDecoder ignored : responseDecoder.slots())
        {
        }
        final String message = responseDecoder.message();
        return new Reply(cid, correlationId, templateId, code, value, leaseId, statuses, lengths, message,
            headerDecoder.version(), owners, candidates, reasons);
    }

    public void close()
    {
        doorbell.close();
        if (null != regionArena)
        {
            regionArena.close();
        }
        IoUtil.unmap(cnc);
    }
}
