package io.orbitkv.manager.ring;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.AttachRequestDecoder;
import io.orbitkv.codecs.engine.CommitRequestDecoder;
import io.orbitkv.codecs.engine.DetachRequestDecoder;
import io.orbitkv.codecs.engine.HeartbeatRequestDecoder;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.PrepareRequestDecoder;
import io.orbitkv.codecs.engine.PublishRequestDecoder;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.codecs.engine.ReleaseRequestDecoder;
import java.nio.ByteOrder;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Decodes requests from the many-to-one request ring. Everything an engine writes is untrusted: the adapter checks
 * the frame length, schema id, version and template id, then walks the whole frame (root block, group header and
 * every entry, var-data lengths) against the frame's end before any decoder reads a field. Only then are the
 * pre-allocated decoders wrapped, with the sender's block length and version, and the request handed on as plain
 * values, the keys of Publish, Lookup and Read in a reused {@link RequestKeys}.
 *
 * <p>Decoders read through a view bounded to the frame, so even a bug in the walk cannot read a neighbouring frame.
 */
final class RequestAdapter implements MessageHandler
{
    static final int HASH_LENGTH_HEADER = 1;
    static final int VAR_LENGTH_HEADER = 2;
    static final int GROUP_HEADER = 4;

    private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final AttachRequestDecoder attachDecoder = new AttachRequestDecoder();
    private final DetachRequestDecoder detachDecoder = new DetachRequestDecoder();
    private final HeartbeatRequestDecoder heartbeatDecoder = new HeartbeatRequestDecoder();
    private final PublishRequestDecoder publishDecoder = new PublishRequestDecoder();
    private final LookupRequestDecoder lookupDecoder = new LookupRequestDecoder();
    /** Schema version that added ReadRequest.flags. */
    static final int READ_FLAGS_VERSION = 3;
    /** Schema version that added a Publish block's lineage: parent hash and token ids. */
    static final int LINEAGE_VERSION = 4;
    static final int TOKEN_IDS_LENGTH_HEADER = 2;

    private final ReadRequestDecoder readDecoder = new ReadRequestDecoder();
    private final PrepareRequestDecoder prepareDecoder = new PrepareRequestDecoder();
    private final CommitRequestDecoder commitDecoder = new CommitRequestDecoder();
    private final ReleaseRequestDecoder releaseDecoder = new ReleaseRequestDecoder();
    private final RequestKeys keys = new RequestKeys();
    private final RingRequests handler;

    private Rejection walkFailure;
    private int walkKeyCount;
    private int walkVarOffset;
    private int walkVarLength;

    RequestAdapter(final RingRequests handler)
    {
        this.handler = handler;
    }

    public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        frame.wrap(buffer, index, length);
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            handler.onBadFrame(Rejection.FRAME_TRUNCATED, 0, frame, length);
            return;
        }

        headerDecoder.wrap(frame, 0);
        final int templateId = headerDecoder.templateId();
        if (MessageHeaderDecoder.SCHEMA_ID != headerDecoder.schemaId())
        {
            handler.onBadFrame(Rejection.SCHEMA_ID_MISMATCH, templateId, frame, length);
            return;
        }
        final int version = headerDecoder.version();
        if (version < 1 || version > MessageHeaderDecoder.SCHEMA_VERSION)
        {
            handler.onBadFrame(Rejection.VERSION_UNSUPPORTED, templateId, frame, length);
            return;
        }
        if (length > EngineRingLimits.MAX_REQUEST_BYTES)
        {
            handler.onBadFrame(Rejection.FRAME_TOO_LARGE, templateId, frame, length);
            return;
        }

        final int blockLength = headerDecoder.blockLength();
        final int rootOffset = MessageHeaderDecoder.ENCODED_LENGTH;
        final int rootEnd = rootOffset + blockLength;

        switch (templateId)
        {
            case AttachRequestDecoder.TEMPLATE_ID:
                if (checkRoot(AttachRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId) &&
                    walkVarAscii(rootEnd, length, EngineRingLimits.MAX_CLIENT_NAME_LENGTH, templateId))
                {
                    attachDecoder.wrap(frame, rootOffset, blockLength, version);
                    handler.onAttach(
                        attachDecoder.correlationId(),
                        attachDecoder.slotIndex(),
                        attachDecoder.pid(),
                        attachDecoder.dataRegionBytes(),
                        frame,
                        walkVarOffset,
                        walkVarLength);
                }
                break;

            case DetachRequestDecoder.TEMPLATE_ID:
                if (checkRoot(DetachRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId))
                {
                    detachDecoder.wrap(frame, rootOffset, blockLength, version);
                    handler.onDetach(detachDecoder.clientId(), detachDecoder.correlationId());
                }
                break;

            case HeartbeatRequestDecoder.TEMPLATE_ID:
                if (checkRoot(HeartbeatRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId))
                {
                    heartbeatDecoder.wrap(frame, rootOffset, blockLength, version);
                    handler.onHeartbeat(heartbeatDecoder.clientId());
                }
                break;

            case PublishRequestDecoder.TEMPLATE_ID:
                if (checkRoot(PublishRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId) &&
                    walkKeys(rootEnd, length, PublishRequestDecoder.BlocksDecoder.sbeBlockLength(), templateId,
                        version >= LINEAGE_VERSION))
                {
                    publishDecoder.wrap(frame, rootOffset, blockLength, version);
                    decodePublishKeys();
                    handler.onPublish(publishDecoder.clientId(), publishDecoder.correlationId(), keys);
                }
                break;

            case LookupRequestDecoder.TEMPLATE_ID:
                if (checkRoot(LookupRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId) &&
                    walkKeys(rootEnd, length, LookupRequestDecoder.KeysDecoder.sbeBlockLength(), templateId, false))
                {
                    lookupDecoder.wrap(frame, rootOffset, blockLength, version);
                    final long lookupClientId = lookupDecoder.clientId();
                    final long lookupCorrelationId = lookupDecoder.correlationId();
                    final int flags = lookupDecoder.flags().getRaw() & 0xFF;
                    decodeLookupKeys();
                    handler.onLookup(lookupClientId, lookupCorrelationId, flags, keys);
                }
                break;

            case ReadRequestDecoder.TEMPLATE_ID:
                // Version 3 appended the flags to the root block: older senders' blocks end before them.
                if (checkRoot(version < READ_FLAGS_VERSION ? ReadRequestDecoder.flagsEncodingOffset() :
                    ReadRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId) &&
                    walkKeys(rootEnd, length, ReadRequestDecoder.KeysDecoder.sbeBlockLength(), templateId, false))
                {
                    readDecoder.wrap(frame, rootOffset, blockLength, version);
                    final long readClientId = readDecoder.clientId();
                    final long readCorrelationId = readDecoder.correlationId();
                    final long leaseId = readDecoder.leaseId();
                    final int readFlags = version < READ_FLAGS_VERSION ? 0 : frame.getByte(
                        rootOffset + ReadRequestDecoder.flagsEncodingOffset()) & 0xFF;
                    decodeReadKeys();
                    handler.onRead(readClientId, readCorrelationId, leaseId, readFlags, keys);
                }
                break;

            case ReleaseRequestDecoder.TEMPLATE_ID:
                if (checkRoot(ReleaseRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId))
                {
                    releaseDecoder.wrap(frame, rootOffset, blockLength, version);
                    handler.onRelease(releaseDecoder.clientId(), releaseDecoder.correlationId(), releaseDecoder.leaseId());
                }
                break;

            case PrepareRequestDecoder.TEMPLATE_ID:
                if (checkRoot(PrepareRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId) &&
                    walkKeys(rootEnd, length, PrepareRequestDecoder.BlocksDecoder.sbeBlockLength(), templateId, false))
                {
                    prepareDecoder.wrap(frame, rootOffset, blockLength, version);
                    final long prepareClientId = prepareDecoder.clientId();
                    final long prepareCorrelationId = prepareDecoder.correlationId();
                    decodePrepareKeys();
                    handler.onPrepare(prepareClientId, prepareCorrelationId, keys);
                }
                break;

            case CommitRequestDecoder.TEMPLATE_ID:
                if (checkRoot(CommitRequestDecoder.BLOCK_LENGTH, blockLength, rootEnd, length, templateId) &&
                    walkKeys(rootEnd, length, CommitRequestDecoder.KeysDecoder.sbeBlockLength(), templateId, false))
                {
                    commitDecoder.wrap(frame, rootOffset, blockLength, version);
                    final long commitClientId = commitDecoder.clientId();
                    final long commitCorrelationId = commitDecoder.correlationId();
                    decodeCommitKeys();
                    handler.onCommit(commitClientId, commitCorrelationId, keys);
                }
                break;

            default:
                handler.onBadFrame(Rejection.UNKNOWN_TEMPLATE, templateId, frame, length);
                break;
        }
    }

    private void decodePublishKeys()
    {
        keys.reset(frame, walkVarOffset, walkVarLength);
        final PublishRequestDecoder.BlocksDecoder blocks = publishDecoder.blocks();
        for (int i = 0; i < walkKeyCount; i++)
        {
            blocks.next();
            final long offset = blocks.offset();
            final int length = blocks.length();
            final int hashLength = blocks.hashLength();
            keys.add(publishDecoder.limit() + HASH_LENGTH_HEADER, hashLength, offset, length);
            blocks.skipHash();
            // Zero for a sender older than the lineage: the decoder knows the acting version.
            final int parentLength = blocks.parentHashLength();
            final int parentOffset = publishDecoder.limit() + HASH_LENGTH_HEADER;
            blocks.skipParentHash();
            final int tokenBytes = blocks.tokenIdsLength();
            final int tokenOffset = publishDecoder.limit() + TOKEN_IDS_LENGTH_HEADER;
            blocks.skipTokenIds();
            keys.lineage(parentOffset, parentLength, tokenOffset, tokenBytes / Integer.BYTES);
        }
    }

    private void decodePrepareKeys()
    {
        keys.reset(frame, walkVarOffset, walkVarLength);
        final PrepareRequestDecoder.BlocksDecoder blocks = prepareDecoder.blocks();
        for (int i = 0; i < walkKeyCount; i++)
        {
            blocks.next();
            final int length = blocks.length();
            final int hashLength = blocks.hashLength();
            keys.add(prepareDecoder.limit() + HASH_LENGTH_HEADER, hashLength, 0L, length);
            blocks.skipHash();
        }
    }

    private void decodeCommitKeys()
    {
        keys.reset(frame, walkVarOffset, walkVarLength);
        final CommitRequestDecoder.KeysDecoder group = commitDecoder.keys();
        for (int i = 0; i < walkKeyCount; i++)
        {
            group.next();
            final int hashLength = group.hashLength();
            keys.add(commitDecoder.limit() + HASH_LENGTH_HEADER, hashLength, 0L, 0);
            group.skipHash();
        }
    }

    private void decodeLookupKeys()
    {
        keys.reset(frame, walkVarOffset, walkVarLength);
        final LookupRequestDecoder.KeysDecoder group = lookupDecoder.keys();
        for (int i = 0; i < walkKeyCount; i++)
        {
            group.next();
            final int hashLength = group.hashLength();
            keys.add(lookupDecoder.limit() + HASH_LENGTH_HEADER, hashLength, 0L, 0);
            group.skipHash();
        }
    }

    private void decodeReadKeys()
    {
        keys.reset(frame, walkVarOffset, walkVarLength);
        final ReadRequestDecoder.KeysDecoder group = readDecoder.keys();
        for (int i = 0; i < walkKeyCount; i++)
        {
            group.next();
            final long dstOffset = group.dstOffset();
            final int dstCapacity = group.dstCapacity();
            final int hashLength = group.hashLength();
            keys.add(readDecoder.limit() + HASH_LENGTH_HEADER, hashLength, dstOffset, dstCapacity);
            group.skipHash();
        }
    }

    private boolean checkRoot(
        final int schemaBlockLength, final int blockLength, final int rootEnd, final int length, final int templateId)
    {
        if (blockLength < schemaBlockLength)
        {
            handler.onBadFrame(Rejection.BLOCK_LENGTH_TOO_SHORT, templateId, frame, length);
            return false;
        }
        if (rootEnd > length)
        {
            handler.onBadFrame(Rejection.FRAME_TRUNCATED, templateId, frame, length);
            return false;
        }
        return true;
    }

    private boolean walkVarAscii(final int offset, final int length, final int maxLength, final int templateId)
    {
        if (offset + VAR_LENGTH_HEADER > length)
        {
            handler.onBadFrame(Rejection.VAR_DATA_PAST_END, templateId, frame, length);
            return false;
        }
        final int varLength = frame.getShort(offset, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        if (offset + VAR_LENGTH_HEADER + varLength > length)
        {
            handler.onBadFrame(Rejection.VAR_DATA_PAST_END, templateId, frame, length);
            return false;
        }
        if (varLength < 1 || varLength > maxLength)
        {
            handler.onBadFrame(Rejection.BAD_CLIENT_NAME, templateId, frame, length);
            return false;
        }
        walkVarOffset = offset + VAR_LENGTH_HEADER;
        walkVarLength = varLength;
        return true;
    }

    /**
     * Walk a keys group whose entries end in a one-byte-length hash (and, with lineage, a one-byte-length parent hash
     * and two-byte-length token ids), then the trailing namespace.
     */
    private boolean walkKeys(
        final int groupOffset, final int length, final int schemaEntryLength, final int templateId, final boolean lineage)
    {
        walkFailure = null;
        final int namespaceOffset = walkGroup(groupOffset, length, schemaEntryLength, lineage);
        if (null == walkFailure)
        {
            walkNamespace(namespaceOffset, length);
        }
        if (null != walkFailure)
        {
            handler.onBadFrame(walkFailure, templateId, frame, length);
            return false;
        }
        return true;
    }

    private int walkGroup(final int groupOffset, final int length, final int schemaEntryLength, final boolean lineage)
    {
        if (groupOffset + GROUP_HEADER > length)
        {
            walkFailure = Rejection.GROUP_HEADER_PAST_END;
            return -1;
        }
        final int entryLength = frame.getShort(groupOffset, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int count = frame.getShort(groupOffset + 2, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        if (entryLength < schemaEntryLength)
        {
            walkFailure = Rejection.GROUP_BLOCK_LENGTH_TOO_SHORT;
            return -1;
        }
        if (count < 1 || count > EngineRingLimits.MAX_KEYS_PER_REQUEST)
        {
            walkFailure = Rejection.KEY_COUNT;
            return -1;
        }

        int position = groupOffset + GROUP_HEADER;
        for (int i = 0; i < count; i++)
        {
            if (position + entryLength + HASH_LENGTH_HEADER > length)
            {
                walkFailure = Rejection.GROUP_ENTRY_PAST_END;
                return -1;
            }
            position += entryLength;
            final int hashLength = frame.getByte(position) & 0xFF;
            if (position + HASH_LENGTH_HEADER + hashLength > length)
            {
                walkFailure = Rejection.VAR_DATA_PAST_END;
                return -1;
            }
            if (hashLength < 1 || hashLength > EngineRingLimits.MAX_HASH_LENGTH)
            {
                walkFailure = Rejection.HASH_LENGTH;
                return -1;
            }
            position += HASH_LENGTH_HEADER + hashLength;
            if (lineage)
            {
                position = walkLineage(position, length);
                if (position < 0)
                {
                    return -1;
                }
            }
        }
        walkKeyCount = count;
        return position;
    }

    private int walkLineage(final int offset, final int length)
    {
        if (offset + HASH_LENGTH_HEADER > length)
        {
            walkFailure = Rejection.VAR_DATA_PAST_END;
            return -1;
        }
        final int parentLength = frame.getByte(offset) & 0xFF;
        if (offset + HASH_LENGTH_HEADER + parentLength > length)
        {
            walkFailure = Rejection.VAR_DATA_PAST_END;
            return -1;
        }
        if (parentLength > EngineRingLimits.MAX_HASH_LENGTH)
        {
            walkFailure = Rejection.PARENT_HASH_LENGTH;
            return -1;
        }
        final int tokensOffset = offset + HASH_LENGTH_HEADER + parentLength;
        if (tokensOffset + TOKEN_IDS_LENGTH_HEADER > length)
        {
            walkFailure = Rejection.VAR_DATA_PAST_END;
            return -1;
        }
        final int tokenBytes = frame.getShort(tokensOffset, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        if (tokensOffset + TOKEN_IDS_LENGTH_HEADER + tokenBytes > length)
        {
            walkFailure = Rejection.VAR_DATA_PAST_END;
            return -1;
        }
        if (0 != tokenBytes % Integer.BYTES)
        {
            walkFailure = Rejection.TOKEN_IDS_LENGTH;
            return -1;
        }
        if (tokenBytes > EngineRingLimits.MAX_TOKENS_PER_BLOCK * Integer.BYTES)
        {
            walkFailure = Rejection.TOO_MANY_TOKENS;
            return -1;
        }
        return tokensOffset + TOKEN_IDS_LENGTH_HEADER + tokenBytes;
    }

    private void walkNamespace(final int offset, final int length)
    {
        if (offset + VAR_LENGTH_HEADER > length)
        {
            walkFailure = Rejection.VAR_DATA_PAST_END;
            return;
        }
        final int namespaceLength = frame.getShort(offset, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        if (offset + VAR_LENGTH_HEADER + namespaceLength > length)
        {
            walkFailure = Rejection.VAR_DATA_PAST_END;
            return;
        }
        if (namespaceLength < 1 || namespaceLength > EngineRingLimits.MAX_NAMESPACE_LENGTH)
        {
            walkFailure = Rejection.NAMESPACE_LENGTH;
            return;
        }
        walkVarOffset = offset + VAR_LENGTH_HEADER;
        walkVarLength = namespaceLength;
    }
}
