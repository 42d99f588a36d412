package io.orbitkv.manager;

import io.orbitkv.codecs.engine.AttachRequestEncoder;
import io.orbitkv.codecs.engine.CommitRequestEncoder;
import io.orbitkv.codecs.engine.DetachRequestEncoder;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.PrepareRequestEncoder;
import io.orbitkv.codecs.engine.PublishRequestEncoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import io.orbitkv.codecs.engine.ReleaseRequestEncoder;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Engine request frames written by hand at offset 0 of a scratch buffer, header included, for tests that talk to
 * the engine ring without the engine client (raw flag bytes, arbitrary hashes). Each method returns the frame
 * length.
 */
public final class RequestFrames
{
    private RequestFrames()
    {
    }

    public static int attach(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long correlationId,
        final int slotIndex,
        final long pid,
        final long dataRegionBytes,
        final String name)
    {
        final AttachRequestEncoder encoder = new AttachRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder)
            .correlationId(correlationId)
            .slotIndex(slotIndex)
            .pid(pid)
            .dataRegionBytes(dataRegionBytes);
        final byte[] nameBytes = name.getBytes(StandardCharsets.US_ASCII);
        encoder.putClientName(nameBytes, 0, nameBytes.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private static final byte[] EMPTY = new byte[0];

    public static int publish(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final long[] offsets,
        final int[] lengths,
        final byte[][] hashes)
    {
        return publish(frame, headerEncoder, clientId, correlationId, namespace, offsets, lengths, hashes, null, null);
    }

    /**
     * A Publish whose blocks carry a lineage: {@code parents[i]} and {@code tokenIds[i]} (little-endian int32 bytes on
     * the wire); a null array, or a null entry, sends that part empty.
     */
    public static int publish(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final long[] offsets,
        final int[] lengths,
        final byte[][] hashes,
        final byte[][] parents,
        final int[][] tokenIds)
    {
        final PublishRequestEncoder encoder = new PublishRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(correlationId);
        final PublishRequestEncoder.BlocksEncoder blocks = encoder.blocksCount(hashes.length);
        for (int i = 0; i < hashes.length; i++)
        {
            final byte[] parent = null == parents || null == parents[i] ? EMPTY : parents[i];
            final int[] tokens = null == tokenIds || null == tokenIds[i] ? new int[0] : tokenIds[i];
            final UnsafeBuffer tokenBytes = new UnsafeBuffer(new byte[tokens.length * Integer.BYTES]);
            for (int t = 0; t < tokens.length; t++)
            {
                tokenBytes.putInt(t * Integer.BYTES, tokens[t], ByteOrder.LITTLE_ENDIAN);
            }
            blocks.next().offset(offsets[i]).length(lengths[i]).putHash(hashes[i], 0, hashes[i].length)
                .putParentHash(parent, 0, parent.length).putTokenIds(tokenBytes, 0, tokenBytes.capacity());
        }
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        encoder.putKeyNamespace(ns, 0, ns.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /**
     * A Publish as a sender of schema version 3 writes it: no lineage fields at all.
     */
    public static int publishVersion3(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final long offset,
        final int length,
        final byte[] hash)
    {
        final PublishRequestEncoder encoder = new PublishRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(correlationId);
        headerEncoder.version(3);
        encoder.blocksCount(1).next().offset(offset).length(length).putHash(hash, 0, hash.length);
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        encoder.putKeyNamespace(ns, 0, ns.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    public static int prepare(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final int[] lengths,
        final byte[][] hashes)
    {
        final PrepareRequestEncoder encoder = new PrepareRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(correlationId);
        final PrepareRequestEncoder.BlocksEncoder blocks = encoder.blocksCount(hashes.length);
        for (int i = 0; i < hashes.length; i++)
        {
            blocks.next().length(lengths[i]).putHash(hashes[i], 0, hashes[i].length);
        }
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        encoder.putKeyNamespace(ns, 0, ns.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    public static int commit(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final byte[][] hashes)
    {
        final CommitRequestEncoder encoder = new CommitRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(correlationId);
        final CommitRequestEncoder.KeysEncoder keys = encoder.keysCount(hashes.length);
        for (final byte[] hash : hashes)
        {
            keys.next().putHash(hash, 0, hash.length);
        }
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        encoder.putKeyNamespace(ns, 0, ns.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    public static int lookup(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final int rawFlags,
        final byte[][] hashes)
    {
        final LookupRequestEncoder encoder = new LookupRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(correlationId);
        frame.putByte(MessageHeaderEncoder.ENCODED_LENGTH + LookupRequestEncoder.flagsEncodingOffset(), (byte)rawFlags);
        final LookupRequestEncoder.KeysEncoder keys = encoder.keysCount(hashes.length);
        for (final byte[] hash : hashes)
        {
            keys.next().putHash(hash, 0, hash.length);
        }
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        encoder.putKeyNamespace(ns, 0, ns.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    public static int read(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final long leaseId,
        final long[] dstOffsets,
        final int[] capacities,
        final byte[][] hashes)
    {
        return read(frame, headerEncoder, clientId, correlationId, namespace, leaseId, 0, dstOffsets, capacities, hashes);
    }

    public static int read(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final String namespace,
        final long leaseId,
        final int rawFlags,
        final long[] dstOffsets,
        final int[] capacities,
        final byte[][] hashes)
    {
        final ReadRequestEncoder encoder = new ReadRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder)
            .clientId(clientId).correlationId(correlationId).leaseId(leaseId);
        frame.putByte(MessageHeaderEncoder.ENCODED_LENGTH + ReadRequestEncoder.flagsEncodingOffset(), (byte)rawFlags);
        final ReadRequestEncoder.KeysEncoder keys = encoder.keysCount(hashes.length);
        for (int i = 0; i < hashes.length; i++)
        {
            keys.next().dstOffset(dstOffsets[i]).dstCapacity(capacities[i]).putHash(hashes[i], 0, hashes[i].length);
        }
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        encoder.putKeyNamespace(ns, 0, ns.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    public static int release(
        final MutableDirectBuffer frame,
        final MessageHeaderEncoder headerEncoder,
        final long clientId,
        final long correlationId,
        final long leaseId)
    {
        final ReleaseRequestEncoder encoder = new ReleaseRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder)
            .clientId(clientId).correlationId(correlationId).leaseId(leaseId);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    public static int detach(
        final MutableDirectBuffer frame, final MessageHeaderEncoder headerEncoder, final long clientId, final long correlationId)
    {
        final DetachRequestEncoder encoder = new DetachRequestEncoder();
        encoder.wrapAndApplyHeader(frame, 0, headerEncoder).clientId(clientId).correlationId(correlationId);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }
}
