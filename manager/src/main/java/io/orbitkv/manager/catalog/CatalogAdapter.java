package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.catalog.SnapshotCut;
import io.orbitkv.codecs.StateKey;
import io.orbitkv.codecs.catalog.CatalogAckDecoder;
import io.orbitkv.codecs.catalog.CatalogDeltaBatchDecoder;
import io.orbitkv.codecs.catalog.CatalogResponseDecoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryDecoder;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.codecs.catalog.GapRepairRequestDecoder;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.RouteDecoder;
import io.orbitkv.codecs.catalog.SnapshotBeginDecoder;
import io.orbitkv.codecs.catalog.SnapshotEndDecoder;
import io.orbitkv.codecs.catalog.SnapshotPageDecoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.peer.PeerFrameException;
import io.orbitkv.manager.peer.PeerFrameHandler;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.PeerSessions;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Decodes the catalog's frames the peer transport hands over (schema {@code io.orbitkv.codecs.catalog}, every message
 * but the session protocol, which the transport keeps): checks template id and block length, wraps the preallocated
 * decoder with the sender's block length and version, validates the route, the session and every key, and delivers
 * plain values to the {@link CatalogHandler}; a cold query goes to the handler too, which answers it (the catalog
 * host), and its answer's status is counted here without decoding the reply again. Answers and refusals are encoded
 * by the {@link CatalogProxy}.
 * <p>
 * Bad bytes never throw out of here: the frame is read through a view bounded to its length, so any overrun (huge
 * group counts or var-data lengths) is an {@link IndexOutOfBoundsException} turned into a counted MALFORMED
 * rejection with an entry in the error log. A rejection is answered with a CatalogResponse when the sender is
 * identifiable (an active session on this peer); anything else is only counted. Frames are counted per template in
 * the transport's counters, except a CatalogResponse, which the transport counts as it reads every one first (it may
 * answer a connect). Single threaded (the peer agent).
 * <p>
 * Longer than our usual file: it is the one decoder of the catalog schema, one handler per template sharing the
 * per-frame state (current session, shard and correlation id for the rejection answer) and the route, key and
 * rejection helpers, as Aeron keeps one ControlSessionAdapter per protocol.
 */
public final class CatalogAdapter implements PeerFrameHandler
{
    private static final PeerFrameException MALFORMED_FRAME = new PeerFrameException("malformed peer frame");
    private static final PeerFrameException UNKNOWN_TEMPLATE_FRAME =
        new PeerFrameException("peer frame with an unknown template");
    private static final int NO_SHARD = 0;

    private final PeerSessions sessions;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final CatalogProxy proxy;
    private final CatalogRequestValidator validator;
    private final CatalogHandler handler;

    private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer namespace = new UnsafeBuffer(new byte[StateKey.MAX_NAMESPACE_LENGTH]);
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[StateKey.MAX_HASH_LENGTH]);
    // Zero-copy views of a delta record's key inside the frame.
    private final UnsafeBuffer namespaceView = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer hashView = new UnsafeBuffer(0, 0);
    private final JournalRecord record = new JournalRecord();
    private final DeltaBatchOutcome outcome = new DeltaBatchOutcome();

    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final CatalogDeltaBatchDecoder batchDecoder = new CatalogDeltaBatchDecoder();
    private final CatalogAckDecoder ackDecoder = new CatalogAckDecoder();
    private final GapRepairRequestDecoder repairDecoder = new GapRepairRequestDecoder();
    private final SnapshotBeginDecoder beginDecoder = new SnapshotBeginDecoder();
    private final SnapshotPageDecoder pageDecoder = new SnapshotPageDecoder();
    private final SnapshotEndDecoder endDecoder = new SnapshotEndDecoder();
    private final ColdQueryDecoder queryDecoder = new ColdQueryDecoder();
    private final ColdQueryResponseDecoder queryResponseDecoder = new ColdQueryResponseDecoder();
    private final CatalogResponseDecoder responseDecoder = new CatalogResponseDecoder();

    private long nowNs;
    private PeerSession currentSession;
    private int currentShard;
    private long currentCorrelationId;

    /**
     * @param sessions     where senders are found (the transport's publisher).
     * @param counters     the transport's counters, where frames and refusals are counted.
     * @param errorHandler where malformed frames are logged.
     * @param proxy        encodes the answers and refusals.
     * @param validator    judges every route and key before anything is touched.
     * @param handler      where the decoded messages go.
     */
    public CatalogAdapter(
        final PeerSessions sessions,
        final PeerCounters counters,
        final ErrorHandler errorHandler,
        final CatalogProxy proxy,
        final CatalogRequestValidator validator,
        final CatalogHandler handler)
    {
        this.sessions = sessions;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.proxy = proxy;
        this.validator = validator;
        this.handler = handler;
    }

    /**
     * The transfer frames of a peer without a transfer part: each is counted as dropped, none is read.
     *
     * @param counters the transport's counters.
     * @return the frame handler of the transfer schema to give the transport.
     */
    public static PeerFrameHandler transferFramesDropped(final PeerCounters counters)
    {
        return PeerFrameHandler.dropping(
            io.orbitkv.codecs.transfer.MessageHeaderDecoder.SCHEMA_ID, counters, PeerCounter.TRANSFER_REJECTED_NO_HANDLER);
    }

    public int schemaId()
    {
        return MessageHeaderDecoder.SCHEMA_ID;
    }

    public void onFrame(final DirectBuffer buffer, final int offset, final int length, final long nowNs)
    {
        this.nowNs = nowNs;
        currentSession = null;
        currentShard = NO_SHARD;
        currentCorrelationId = 0;
        try
        {
            // The transport checked the header's length, schema and version.
            frame.wrap(buffer, offset, length);
            headerDecoder.wrap(frame, 0);
            final int blockLength = headerDecoder.blockLength();
            final int version = headerDecoder.version();
            switch (headerDecoder.templateId())
            {
                case CatalogDeltaBatchDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_DELTA_BATCH);
                    if (blockOk(blockLength, CatalogDeltaBatchDecoder.BLOCK_LENGTH, length))
                    {
                        batchDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onDeltaBatch(blockLength, version);
                    }
                }
                case CatalogAckDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_ACK);
                    if (blockOk(blockLength, CatalogAckDecoder.BLOCK_LENGTH, length))
                    {
                        ackDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onAck();
                    }
                }
                case GapRepairRequestDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_GAP_REPAIR);
                    if (blockOk(blockLength, GapRepairRequestDecoder.BLOCK_LENGTH, length))
                    {
                        repairDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onGapRepair();
                    }
                }
                case SnapshotBeginDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_SNAPSHOT);
                    if (blockOk(blockLength, SnapshotBeginDecoder.BLOCK_LENGTH, length))
                    {
                        beginDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onSnapshotBegin();
                    }
                }
                case SnapshotPageDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_SNAPSHOT);
                    if (blockOk(blockLength, SnapshotPageDecoder.BLOCK_LENGTH, length))
                    {
                        pageDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onSnapshotPage();
                    }
                }
                case SnapshotEndDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_SNAPSHOT);
                    if (blockOk(blockLength, SnapshotEndDecoder.BLOCK_LENGTH, length))
                    {
                        endDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onSnapshotEnd();
                    }
                }
                case ColdQueryDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_COLD_QUERY);
                    if (blockOk(blockLength, ColdQueryDecoder.BLOCK_LENGTH, length))
                    {
                        queryDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onColdQuery(length);
                    }
                }
                case ColdQueryResponseDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_COLD_QUERY_RESPONSE);
                    if (blockOk(blockLength, ColdQueryResponseDecoder.BLOCK_LENGTH, length))
                    {
                        queryResponseDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onColdQueryResponse();
                    }
                }
                case CatalogResponseDecoder.TEMPLATE_ID ->
                {
                    // Counted by the transport, which reads every response first.
                    if (blockOk(blockLength, CatalogResponseDecoder.BLOCK_LENGTH, length))
                    {
                        responseDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onResponse();
                    }
                }
                default -> rejectFrame(CatalogStatus.UNKNOWN_TEMPLATE);
            }
        }
        catch (final IndexOutOfBoundsException | IllegalArgumentException | IllegalStateException ex)
        {
            rejectFrame(CatalogStatus.MALFORMED);
        }
    }

    private boolean blockOk(final int blockLength, final int minimumBlockLength, final int length)
    {
        if (blockLength < minimumBlockLength || MessageHeaderDecoder.ENCODED_LENGTH + blockLength > length)
        {
            rejectFrame(CatalogStatus.MALFORMED);
            return false;
        }
        return true;
    }

    /**
     * Common checks of a message to this peer as catalog host: an active session, the route, and that the session's
     * requester is the publisher named in the route.
     */
    private boolean acceptHostBound(final RouteDecoder route, final long sessionId, final boolean requireHostedShard)
    {
        final PeerSession session = sessions.session(sessionId);
        if (null == session || !session.isActive())
        {
            counters.increment(PeerCounter.REJECTED_UNKNOWN_SESSION);
            return false;
        }
        currentSession = session;
        currentShard = route.shard();
        final CatalogStatus status = validator.checkRoute(route.shard(), route.placementFingerprint(),
            route.destinationIncarnation().msb(), route.destinationIncarnation().lsb(), requireHostedShard);
        if (CatalogStatus.OK != status)
        {
            reject(status);
            return false;
        }
        if (!session.isFrom(route.senderIncarnation().msb(), route.senderIncarnation().lsb()))
        {
            reject(CatalogStatus.UNREGISTERED_PUBLISHER);
            return false;
        }
        return true;
    }

    /**
     * Common checks of a message to this peer as owner or requester: a client session the sender answers on, and the
     * route (fingerprint, destination incarnation).
     */
    private PeerClient acceptClientBound(final RouteDecoder route, final long sessionId)
    {
        final PeerClient client =
            sessions.client(sessionId, route.senderIncarnation().msb(), route.senderIncarnation().lsb());
        if (null == client)
        {
            counters.increment(PeerCounter.REJECTED_UNKNOWN_SESSION);
            return null;
        }
        final CatalogStatus status = validator.checkRoute(route.shard(), route.placementFingerprint(),
            route.destinationIncarnation().msb(), route.destinationIncarnation().lsb(), false);
        if (CatalogStatus.OK != status)
        {
            reject(status);
            return null;
        }
        return client;
    }

    private void onDeltaBatch(final int blockLength, final int version)
    {
        final RouteDecoder route = batchDecoder.route();
        if (!acceptHostBound(route, batchDecoder.sessionId(), true))
        {
            return;
        }
        final int shard = route.shard();
        final long senderMsb = route.senderIncarnation().msb();
        final long senderLsb = route.senderIncarnation().lsb();
        final long firstSequence = batchDecoder.firstSequence();
        CatalogDeltaBatchDecoder.RecordsDecoder records = batchDecoder.records();
        if (records.count() > CatalogProxy.MAX_DELTA_BATCH_RECORDS)
        {
            reject(CatalogStatus.BATCH_TOO_LARGE);
            return;
        }
        // Resolved once per batch: membership changes on this thread, between frames.
        final ShardReceiver receiver = handler.deltaReceiver(currentSession, shard);
        if (null != receiver)
        {
            touchRecords(records, receiver);
            batchDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
            records = batchDecoder.records();
        }
        // First pass: validate every record, so a batch is applied whole or not at all.
        while (records.hasNext())
        {
            records.next();
            final int tier = records.tierRaw();
            final CatalogStatus status = checkRecord(tier, records.opRaw(), records.byteSize());
            final int namespaceLength = records.keyNamespaceLength();
            if (CatalogStatus.OK != status || !namespaceLengthOk(namespaceLength))
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            records.wrapKeyNamespace(namespaceView);
            final int hashLength = records.keyHashLength();
            if (!hashLengthOk(hashLength))
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            records.wrapKeyHash(hashView);
            // A key the view already holds had its shard checked on the way in: skip the SHA-256.
            final CatalogStatus keyStatus =
                null != receiver && receiver.holdsKey(tier, namespaceView, 0, namespaceLength, hashView, 0, hashLength) ?
                CatalogStatus.OK : validator.checkKey(shard, namespaceView, 0, namespaceLength, hashView, 0, hashLength);
            if (CatalogStatus.OK != keyStatus)
            {
                reject(keyStatus);
                return;
            }
        }
        batchDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
        records = batchDecoder.records();
        long sequence = firstSequence;
        while (records.hasNext())
        {
            records.next();
            final int tier = records.tierRaw();
            final int op = records.opRaw();
            final long generation = records.generation();
            final long insertionSequence = records.insertionSequence();
            final int byteSize = (int)records.byteSize();
            final int namespaceLength = records.keyNamespaceLength();
            records.wrapKeyNamespace(namespaceView);
            final int hashLength = records.keyHashLength();
            records.wrapKeyHash(hashView);
            record.keyView(namespaceView, 0, namespaceLength, hashView, 0, hashLength)
                .set(sequence++, tier, op, generation, insertionSequence, byteSize);
            final CatalogStatus status = handler.onDelta(currentSession, shard, senderMsb, senderLsb, record);
            if (CatalogStatus.OK != status)
            {
                reject(status);
                break;
            }
        }
        outcome.reset();
        handler.onDeltaBatchEnd(currentSession, shard, nowNs, outcome);
        sendOutcome(shard);
    }

    /**
     * Queue every well-formed key of the batch with its receiver and load them together: the validation and apply
     * passes then find the records in cache. Stops quietly at the first malformed record (validation rejects it).
     */
    private void touchRecords(final CatalogDeltaBatchDecoder.RecordsDecoder records, final ShardReceiver receiver)
    {
        while (records.hasNext())
        {
            records.next();
            final int tier = records.tierRaw();
            final int namespaceLength = records.keyNamespaceLength();
            if (!namespaceLengthOk(namespaceLength))
            {
                break;
            }
            records.wrapKeyNamespace(namespaceView);
            final int hashLength = records.keyHashLength();
            if (!hashLengthOk(hashLength))
            {
                break;
            }
            records.wrapKeyHash(hashView);
            receiver.queueTouch(tier, namespaceView, 0, namespaceLength, hashView, 0, hashLength);
        }
        receiver.touchQueuedKeys();
    }

    private void onSnapshotBegin()
    {
        final RouteDecoder route = beginDecoder.route();
        if (!acceptHostBound(route, beginDecoder.sessionId(), true))
        {
            return;
        }
        currentCorrelationId = beginDecoder.snapshotId();
        final long snapshotId = beginDecoder.snapshotId();
        final long startWatermark = beginDecoder.startWatermark();
        final int recordCount = beginDecoder.recordCount();
        if (SnapshotBeginDecoder.recordCountNullValue() != recordCount && recordCount < 0)
        {
            rejectFrame(CatalogStatus.MALFORMED);
            return;
        }
        final CatalogStatus status = handler.onSnapshotBegin(currentSession, route.shard(),
            route.senderIncarnation().msb(), route.senderIncarnation().lsb(), snapshotId, startWatermark,
            SnapshotBeginDecoder.recordCountNullValue() == recordCount ? 0 : recordCount);
        if (CatalogStatus.OK != status)
        {
            reject(status);
        }
    }

    private void onSnapshotPage()
    {
        final RouteDecoder route = pageDecoder.route();
        if (!acceptHostBound(route, pageDecoder.sessionId(), true))
        {
            return;
        }
        final int shard = route.shard();
        final long snapshotId = pageDecoder.snapshotId();
        currentCorrelationId = snapshotId;
        final int pageIndex = pageDecoder.pageIndex();
        pageDecoder.nextCursor();
        final SnapshotPageDecoder.RecordsDecoder records = pageDecoder.records();
        if (records.count() > CatalogProxy.MAX_DELTA_BATCH_RECORDS)
        {
            reject(CatalogStatus.BATCH_TOO_LARGE);
            return;
        }
        // Pages build a private view installed only when complete, so a rejection part-way cannot expose a half page.
        while (records.hasNext())
        {
            records.next();
            final int tier = records.tierRaw();
            final long version = records.version();
            final long generation = records.generation();
            final long insertionSequence = records.insertionSequence();
            final long byteSize = records.byteSize();
            final CatalogStatus status = checkRecord(tier, 0, byteSize);
            final int namespaceLength = records.keyNamespaceLength();
            if (CatalogStatus.OK != status || !namespaceLengthOk(namespaceLength))
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            records.getKeyNamespace(namespace, 0, namespaceLength);
            final int hashLength = records.keyHashLength();
            if (!hashLengthOk(hashLength))
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            records.getKeyHash(hash, 0, hashLength);
            final CatalogStatus keyStatus = keyStatus(shard, namespaceLength, hashLength);
            if (CatalogStatus.OK != keyStatus)
            {
                reject(keyStatus);
                return;
            }
            record.key(namespace, 0, namespaceLength, hash, 0, hashLength)
                .set(version, tier, JournalRecord.OP_ADD, generation, insertionSequence, (int)byteSize);
            final CatalogStatus applied = handler.onSnapshotRecord(currentSession, shard, snapshotId, record);
            if (CatalogStatus.OK != applied)
            {
                reject(applied);
                return;
            }
        }
        final CatalogStatus status = handler.onSnapshotPageEnd(currentSession, shard, snapshotId, pageIndex);
        if (CatalogStatus.OK != status)
        {
            reject(status);
        }
    }

    private void onSnapshotEnd()
    {
        final RouteDecoder route = endDecoder.route();
        if (!acceptHostBound(route, endDecoder.sessionId(), true))
        {
            return;
        }
        final int shard = route.shard();
        final long snapshotId = endDecoder.snapshotId();
        currentCorrelationId = snapshotId;
        final long startWatermark = endDecoder.startWatermark();
        final long endWatermark = endDecoder.endWatermark();
        final int pageCount = endDecoder.pageCount();
        final SnapshotEndDecoder.IntervalDecoder interval = endDecoder.interval();
        if (interval.count() > SnapshotCut.DEFAULT_MAX_INTERVAL_RECORDS)
        {
            reject(CatalogStatus.BATCH_TOO_LARGE);
            return;
        }
        long sequence = startWatermark + 1;
        while (interval.hasNext())
        {
            interval.next();
            final int tier = interval.tierRaw();
            final int op = interval.opRaw();
            final long generation = interval.generation();
            final long insertionSequence = interval.insertionSequence();
            final long byteSize = interval.byteSize();
            final CatalogStatus status = checkRecord(tier, op, byteSize);
            final int namespaceLength = interval.keyNamespaceLength();
            if (CatalogStatus.OK != status || !namespaceLengthOk(namespaceLength))
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            interval.getKeyNamespace(namespace, 0, namespaceLength);
            final int hashLength = interval.keyHashLength();
            if (!hashLengthOk(hashLength))
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            interval.getKeyHash(hash, 0, hashLength);
            final CatalogStatus keyStatus = keyStatus(shard, namespaceLength, hashLength);
            if (CatalogStatus.OK != keyStatus)
            {
                reject(keyStatus);
                return;
            }
            record.key(namespace, 0, namespaceLength, hash, 0, hashLength)
                .set(sequence++, tier, op, generation, insertionSequence, (int)byteSize);
            final CatalogStatus applied = handler.onSnapshotIntervalRecord(currentSession, shard, snapshotId, record);
            if (CatalogStatus.OK != applied)
            {
                reject(applied);
                return;
            }
        }
        outcome.reset();
        final CatalogStatus status = handler.onSnapshotEnd(
            currentSession, shard, snapshotId, startWatermark, endWatermark, pageCount, outcome);
        if (CatalogStatus.OK != status)
        {
            reject(status);
        }
        sendOutcome(shard);
    }

    private void onAck()
    {
        final RouteDecoder route = ackDecoder.route();
        final PeerClient client = acceptClientBound(route, ackDecoder.sessionId());
        if (null != client)
        {
            handler.onAck(client, route.shard(), ackDecoder.contiguousSequence());
        }
    }

    private void onGapRepair()
    {
        final RouteDecoder route = repairDecoder.route();
        final PeerClient client = acceptClientBound(route, repairDecoder.sessionId());
        if (null != client)
        {
            final long correlationId = repairDecoder.correlationId();
            final long fromSequence = repairDecoder.fromSequence();
            final long toSequence = repairDecoder.toSequence();
            if (fromSequence < 1 || toSequence < fromSequence)
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            handler.onGapRepair(client, route.shard(), correlationId, fromSequence, toSequence);
        }
    }

    private void onColdQuery(final int length)
    {
        final RouteDecoder route = queryDecoder.route();
        final long sessionId = queryDecoder.sessionId();
        final PeerSession session = sessions.session(sessionId);
        if (null == session || !session.isActive())
        {
            counters.increment(PeerCounter.REJECTED_UNKNOWN_SESSION);
            return;
        }
        currentSession = session;
        currentShard = route.shard();
        currentCorrelationId = queryDecoder.correlationId();
        if (!session.isFrom(route.senderIncarnation().msb(), route.senderIncarnation().lsb()))
        {
            reject(CatalogStatus.UNREGISTERED_PUBLISHER);
            return;
        }
        final int replyLength = handler.onColdQuery(session, frame, 0, length, proxy.replyBuffer(), 0);
        final CatalogStatus status = handler.lastColdQueryStatus();
        if (CatalogStatus.OK != status)
        {
            counters.countRejection(status);
        }
        proxy.sendReply(session, replyLength);
    }

    private void onColdQueryResponse()
    {
        final RouteDecoder route = queryResponseDecoder.route();
        final PeerClient client = acceptClientBound(route, queryResponseDecoder.sessionId());
        if (null != client)
        {
            queryResponseDecoder.sbeRewind();
            handler.onColdQueryResponse(client, queryResponseDecoder);
        }
    }

    private void onResponse()
    {
        final RouteDecoder route = responseDecoder.route();
        final long sessionId = responseDecoder.sessionId();
        final long correlationId = responseDecoder.correlationId();
        final CatalogStatus code = responseDecoder.code();
        final long relevantSequence = responseDecoder.relevantSequence();
        final PeerClient client = acceptClientBound(route, sessionId);
        if (null != client)
        {
            handler.onResponse(client, route.shard(), correlationId, code, relevantSequence);
        }
    }

    private static CatalogStatus checkRecord(final int tier, final int op, final long byteSize)
    {
        if ((JournalRecord.TIER_DRAM != tier && JournalRecord.TIER_SSD != tier) ||
            (JournalRecord.OP_ADD != op && JournalRecord.OP_REMOVE != op) ||
            byteSize < 0 || byteSize > Integer.MAX_VALUE)
        {
            return CatalogStatus.MALFORMED;
        }
        return CatalogStatus.OK;
    }

    private static boolean namespaceLengthOk(final int length)
    {
        return length >= 1 && length <= StateKey.MAX_NAMESPACE_LENGTH;
    }

    private static boolean hashLengthOk(final int length)
    {
        return length >= 1 && length <= StateKey.MAX_HASH_LENGTH;
    }

    private CatalogStatus keyStatus(final int shard, final int namespaceLength, final int hashLength)
    {
        // Lengths were checked by checkRecord; the namespace and hash buffers hold the key just read.
        return validator.checkKey(shard, namespace, 0, namespaceLength, hash, 0, hashLength);
    }

    private void sendOutcome(final int shard)
    {
        final PeerSession session = currentSession;
        if (DeltaBatchOutcome.NO_ACK == outcome.ackSequence() && !outcome.repairRequested())
        {
            return;
        }
        if (DeltaBatchOutcome.NO_ACK != outcome.ackSequence())
        {
            proxy.ack(session, shard, outcome.ackSequence());
        }
        if (outcome.repairRequested())
        {
            proxy.gapRepair(session, shard, outcome.repairFrom(), outcome.repairTo());
        }
    }

    private void rejectFrame(final CatalogStatus status)
    {
        errorHandler.onError(CatalogStatus.UNKNOWN_TEMPLATE == status ? UNKNOWN_TEMPLATE_FRAME : MALFORMED_FRAME);
        reject(status);
    }

    private void reject(final CatalogStatus status)
    {
        counters.countRejection(status);
        final PeerSession session = currentSession;
        if (null != session && session.isActive())
        {
            proxy.response(session, currentShard, currentCorrelationId, status);
        }
    }
}
