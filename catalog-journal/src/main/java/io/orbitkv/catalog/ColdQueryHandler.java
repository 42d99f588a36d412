package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKey;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.CatalogResponseEncoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryDecoder;
import io.orbitkv.codecs.catalog.ColdQueryResponseEncoder;
import io.orbitkv.codecs.catalog.Coverage;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.index.CandidateSet;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Catalog-host side of a cold query, independent of the transport: decode one ColdQuery frame, validate it, and encode
 * either a ColdQueryResponse with one row per request key in request order (design: rows remain aligned with the
 * request; an empty row with INCOMPLETE coverage is not proof of absence) or a generic CatalogResponse with the
 * rejection status. A malformed frame (random bytes, truncated, wrong schema or template, lengths beyond the frame) is
 * answered and counted, never thrown: the frame is decoded through a view bounded to its length, so an overrun is an
 * {@link IndexOutOfBoundsException} caught here.
 * <p>
 * Validation order: schema and template, route (fingerprint, destination incarnation), then every key: lengths
 * (MALFORMED), batch limits of {@link CatalogLimits#MAX_COLD_QUERY_KEYS} keys and
 * {@link CatalogLimits#MAX_COLD_QUERY_KEY_BYTES} key bytes (BATCH_TOO_LARGE), and that its shard is hosted here
 * (WRONG_DESTINATION). Single threaded; allocation free after construction.
 */
public final class ColdQueryHandler
{
    private final CatalogRequestValidator validator;
    private final CatalogDirectory directory;
    private long localIncarnationMsb;
    private long localIncarnationLsb;

    private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ColdQueryDecoder queryDecoder = new ColdQueryDecoder();
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ColdQueryResponseEncoder responseEncoder = new ColdQueryResponseEncoder();
    private final CatalogResponseEncoder statusEncoder = new CatalogResponseEncoder();
    private final StateKeyShard shardFunction = new StateKeyShard();
    private final int[] keyShards = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    // Whether keyShards[i] is the requester's claim, not yet checked: a row found in that shard's views proves it
    // (keys enter a view only after their shard was checked); an empty row is checked by hashing the key.
    private final boolean[] claimed = new boolean[CatalogLimits.MAX_COLD_QUERY_KEYS];
    // Where each key's namespace and hash lie in the frame: keys are read in place, never copied.
    private final int[] namespaceOffsets = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    private final int[] namespaceLengths = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    private final int[] hashOffsets = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    private final int[] hashLengths = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    private int keyCount;
    private final CandidateSet row = new CandidateSet();

    private long queriesServed;
    private long rowsServed;
    private long incompleteRows;
    private long malformedFrames;
    private long unknownTemplates;
    private long schemaMismatches;
    private long rejected;
    private CatalogStatus lastStatus = CatalogStatus.OK;
    private long claimsCorrected;

    public ColdQueryHandler(
        final CatalogRequestValidator validator,
        final CatalogDirectory directory,
        final long localIncarnationMsb,
        final long localIncarnationLsb)
    {
        this.validator = validator;
        this.directory = directory;
        this.localIncarnationMsb = localIncarnationMsb;
        this.localIncarnationLsb = localIncarnationLsb;
    }

    /**
     * Speak for a new incarnation of this runtime (a re-registration): routes are judged against, and sent from,
     * the new one; the old one's are refused from now on. Owner thread only.
     *
     * @param msb most significant half of the new runtime UUID.
     * @param lsb least significant half.
     */
    public void localIncarnation(final long msb, final long lsb)
    {
        localIncarnationMsb = msb;
        localIncarnationLsb = lsb;
    }

    /**
     * Handle one frame and encode the reply.
     *
     * @return bytes of the reply written at {@code outOffset}.
     */
    public int onFrame(
        final DirectBuffer buffer, final int offset, final int length, final MutableDirectBuffer out, final int outOffset)
    {
        long sessionId = 0;
        long correlationId = 0;
        long requesterMsb = 0;
        long requesterLsb = 0;
        int shard = 0;
        try
        {
            frame.wrap(buffer, offset, length);
            if (length < MessageHeaderDecoder.ENCODED_LENGTH)
            {
                malformedFrames++;
                return status(out, outOffset, CatalogStatus.MALFORMED, 0, 0, 0, 0, 0);
            }
            headerDecoder.wrap(frame, 0);
            if (headerDecoder.schemaId() != ColdQueryDecoder.SCHEMA_ID)
            {
                schemaMismatches++;
                return status(out, outOffset, CatalogStatus.SCHEMA_MISMATCH, 0, 0, 0, 0, 0);
            }
            if (headerDecoder.templateId() != ColdQueryDecoder.TEMPLATE_ID)
            {
                unknownTemplates++;
                return status(out, outOffset, CatalogStatus.UNKNOWN_TEMPLATE, 0, 0, 0, 0, 0);
            }
            final int blockLength = headerDecoder.blockLength();
            final int version = headerDecoder.version();
            if (blockLength < ColdQueryDecoder.BLOCK_LENGTH || MessageHeaderDecoder.ENCODED_LENGTH + blockLength > length)
            {
                malformedFrames++;
                return status(out, outOffset, CatalogStatus.MALFORMED, 0, 0, 0, 0, 0);
            }
            queryDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
            sessionId = queryDecoder.sessionId();
            correlationId = queryDecoder.correlationId();
            requesterMsb = queryDecoder.route().senderIncarnation().msb();
            requesterLsb = queryDecoder.route().senderIncarnation().lsb();
            shard = queryDecoder.route().shard();
            final CatalogStatus routeStatus = validator.checkRoute(shard, queryDecoder.route().placementFingerprint(),
                queryDecoder.route().destinationIncarnation().msb(), queryDecoder.route().destinationIncarnation().lsb(),
                false);
            if (CatalogStatus.OK != routeStatus)
            {
                rejected++;
                return status(out, outOffset, routeStatus, sessionId, correlationId, requesterMsb, requesterLsb, shard);
            }
            final CatalogStatus keysStatus = checkKeys();
            directory.touchQueued();
            if (CatalogStatus.OK != keysStatus)
            {
                rejected++;
                return status(out, outOffset, keysStatus, sessionId, correlationId, requesterMsb, requesterLsb, shard);
            }
            return respond(out, outOffset, sessionId, correlationId, requesterMsb, requesterLsb, shard);
        }
        catch (final IndexOutOfBoundsException | IllegalStateException ex)
        {
            malformedFrames++;
            return status(out, outOffset, CatalogStatus.MALFORMED, sessionId, correlationId, requesterMsb, requesterLsb,
                shard);
        }
    }

    /**
     * @return the status of the last reply {@link #onFrame} encoded: OK for rows, else the refusal it carried, so a
     * caller counts refusals by reason without decoding the reply again.
     */
    public CatalogStatus lastStatus()
    {
        return lastStatus;
    }

    public long queriesServed()
    {
        return queriesServed;
    }

    public long rowsServed()
    {
        return rowsServed;
    }

    /**
     * @return rows answered from an incomplete shard view (empty or partial rows that prove nothing).
     */
    public long incompleteRows()
    {
        return incompleteRows;
    }

    /**
     * @return keys whose shard, as the requester named it, was wrong (answered from the right shard, or refused when
     *         this host does not hold that shard).
     */
    public long claimsCorrected()
    {
        return claimsCorrected;
    }

    public long malformedFrames()
    {
        return malformedFrames;
    }

    public long unknownTemplates()
    {
        return unknownTemplates;
    }

    public long schemaMismatches()
    {
        return schemaMismatches;
    }

    /**
     * @return well-formed queries refused by route or key validation (see the validator's counters for reasons).
     */
    public long rejected()
    {
        return rejected;
    }

    private CatalogStatus checkKeys()
    {
        final ColdQueryDecoder.KeysDecoder keys = queryDecoder.keys();
        final int count = keys.count();
        keyCount = 0;
        if (count > CatalogLimits.MAX_COLD_QUERY_KEYS)
        {
            return validator.checkColdQueryBatch(count, 0);
        }
        long keyBytes = 0;
        int i = 0;
        while (keys.hasNext())
        {
            keys.next();
            final int claim = keys.shard();
            final int namespaceLength = keys.keyNamespaceLength();
            if (namespaceLength < 1 || namespaceLength > StateKey.MAX_NAMESPACE_LENGTH)
            {
                malformedFrames++;
                return CatalogStatus.MALFORMED;
            }
            final int namespaceOffset = queryDecoder.limit() + ColdQueryDecoder.KeysDecoder.keyNamespaceHeaderLength();
            keys.skipKeyNamespace();
            final int hashLength = keys.keyHashLength();
            if (hashLength < 1 || hashLength > StateKey.MAX_HASH_LENGTH)
            {
                malformedFrames++;
                return CatalogStatus.MALFORMED;
            }
            final int hashOffset = queryDecoder.limit() + ColdQueryDecoder.KeysDecoder.keyHashHeaderLength();
            keys.skipKeyHash();
            if (queryDecoder.limit() > frame.capacity())
            {
                malformedFrames++;
                return CatalogStatus.MALFORMED;
            }
            keyBytes += namespaceLength + hashLength;
            final boolean trusted = directory.hosts(claim);
            final int keyShard = trusted ?
                claim : shardFunction.shard(frame, namespaceOffset, namespaceLength, frame, hashOffset, hashLength);
            if (!directory.hosts(keyShard))
            {
                return validator.checkRoute(keyShard, validator.sendFingerprint(), localIncarnationMsb, localIncarnationLsb, true);
            }
            claimed[i] = trusted;
            keyShards[i] = keyShard;
            namespaceOffsets[i] = namespaceOffset;
            namespaceLengths[i] = namespaceLength;
            hashOffsets[i] = hashOffset;
            hashLengths[i++] = hashLength;
            directory.queueTouch(keyShard, frame, namespaceOffset, namespaceLength, frame, hashOffset, hashLength);
        }
        keyCount = i;
        return validator.checkColdQueryBatch(count, keyBytes);
    }

    private int respond(
        final MutableDirectBuffer out,
        final int outOffset,
        final long sessionId,
        final long correlationId,
        final long requesterMsb,
        final long requesterLsb,
        final int shard)
    {
        lastStatus = CatalogStatus.OK;
        responseEncoder.wrapAndApplyHeader(out, outOffset, headerEncoder);
        route(responseEncoder.route(), requesterMsb, requesterLsb, shard);
        responseEncoder.sessionId(sessionId).correlationId(correlationId).status(CatalogStatus.OK);
        final ColdQueryResponseEncoder.RowsEncoder rows = responseEncoder.rowsCount(keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            final int namespaceOffset = namespaceOffsets[i];
            final int namespaceLength = namespaceLengths[i];
            final int hashOffset = hashOffsets[i];
            final int hashLength = hashLengths[i];
            row.clear();
            boolean complete = directory.lookup(
                keyShards[i], frame, namespaceOffset, namespaceLength, frame, hashOffset, hashLength, row);
            if (claimed[i] && 0 == row.count())
            {
                final int actual = shardFunction.shard(frame, namespaceOffset, namespaceLength, frame, hashOffset, hashLength);
                if (actual != keyShards[i])
                {
                    claimsCorrected++;
                    if (!directory.hosts(actual))
                    {
                        rejected++;
                        return status(out, outOffset, validator.checkRoute(
                            actual, validator.sendFingerprint(), localIncarnationMsb, localIncarnationLsb, true),
                            sessionId, correlationId, requesterMsb, requesterLsb, shard);
                    }
                    complete = directory.lookup(
                        actual, frame, namespaceOffset, namespaceLength, frame, hashOffset, hashLength, row);
                }
            }
            if (!complete)
            {
                incompleteRows++;
            }
            rows.next().rowIndex(i).coverage(complete ? Coverage.COMPLETE : Coverage.INCOMPLETE);
            final ColdQueryResponseEncoder.RowsEncoder.CandidatesEncoder candidates = rows.candidatesCount(row.count());
            for (int c = 0; c < row.count(); c++)
            {
                candidates.next()
                    .ownerNodeIndex(row.ownerNode(c))
                    .insertionSequence(row.insertionSequence(c))
                    .generation(row.generation(c))
                    .tier(0 == row.tier(c) ? ResidenceTier.DRAM : ResidenceTier.SSD)
                    .byteSize(row.byteSize(c));
                candidates.ownerIncarnation().msb(row.incarnationMsb(c)).lsb(row.incarnationLsb(c));
            }
        }
        queriesServed++;
        rowsServed += keyCount;
        return MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength();
    }

    private int status(
        final MutableDirectBuffer out,
        final int outOffset,
        final CatalogStatus code,
        final long sessionId,
        final long correlationId,
        final long requesterMsb,
        final long requesterLsb,
        final int shard)
    {
        lastStatus = code;
        statusEncoder.wrapAndApplyHeader(out, outOffset, headerEncoder);
        route(statusEncoder.route(), requesterMsb, requesterLsb, shard);
        statusEncoder.sessionId(sessionId).correlationId(correlationId).code(code).relevantSequence(-1);
        statusEncoder.putErrorMessage(frame, 0, 0);
        return MessageHeaderEncoder.ENCODED_LENGTH + statusEncoder.encodedLength();
    }

    private void route(
        final io.orbitkv.codecs.catalog.RouteEncoder route, final long destinationMsb, final long destinationLsb,
        final int shard)
    {
        route.shard((short)(shard & 0x0F)).placementFingerprint(validator.sendFingerprint());
        route.destinationIncarnation().msb(destinationMsb).lsb(destinationLsb);
        route.senderIncarnation().msb(localIncarnationMsb).lsb(localIncarnationLsb);
    }
}
