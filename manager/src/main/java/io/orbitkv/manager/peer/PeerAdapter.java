package io.orbitkv.manager.peer;

import io.aeron.ExclusivePublication;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
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
import io.orbitkv.codecs.catalog.PeerConnectDecoder;
import io.orbitkv.codecs.catalog.RouteDecoder;
import io.orbitkv.codecs.catalog.SnapshotBeginDecoder;
import io.orbitkv.codecs.catalog.SnapshotEndDecoder;
import io.orbitkv.codecs.catalog.SnapshotPageDecoder;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Decodes every frame arriving on the peer endpoint: checks length, schema id, template id and block length, wraps
 * the preallocated decoder with the sender's block length and version, validates the route, the session and every
 * key, and delivers to the {@link PeerHandler}; a cold query goes to the handler too, which answers it (the catalog
 * host), and its answer's status is counted here without decoding the reply again.
 * <p>
 * Bad bytes never throw out of here: the frame is read through a view bounded to its length, so any overrun (huge
 * group counts or var-data lengths) is an {@link IndexOutOfBoundsException} turned into a counted MALFORMED
 * rejection with an entry in the error log. A rejection is answered with a CatalogResponse when the sender is
 * identifiable (an active session on this peer); anything else is only counted. Single threaded (the peer agent).
 * <p>
 * Longer than our usual file: it is the one decoder of the catalog schema, one handler per template sharing the
 * per-frame state (current session, shard and correlation id for the rejection answer) and the route, key and
 * rejection helpers, as Aeron keeps one ControlSessionAdapter per protocol. Splitting it by template would spread
 * that state over classes that all need it.
 * <p>
 * Transfer control frames (schema {@code io.orbitkv.codecs.transfer}) share the endpoint: they are told apart by
 * schema id and go to {@link TransferFrames}.
 */
final class PeerAdapter implements FragmentHandler
{
    private static final PeerFrameException MALFORMED_FRAME = new PeerFrameException("malformed peer frame");
    private static final PeerFrameException WRONG_SCHEMA_FRAME = new PeerFrameException("peer frame of another schema");
    private static final PeerFrameException UNKNOWN_TEMPLATE_FRAME =
        new PeerFrameException("peer frame with an unknown template");
    private static final int TRANSFER_SCHEMA_ID = io.orbitkv.codecs.transfer.MessageHeaderDecoder.SCHEMA_ID;
    private static final int NO_SHARD = 0;
    static final int MIN_SCHEMA_VERSION = 1;

    private final PeerAgent agent;
    private final PeerPublisher publisher;
    private final PeerHandler handler;
    private final CatalogRequestValidator validator;
    private final PeerProxy proxy;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final int streamId;
    private final TransferFrames transferFrames;

    private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer namespace = new UnsafeBuffer(new byte[StateKey.MAX_NAMESPACE_LENGTH]);
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[StateKey.MAX_HASH_LENGTH]);
    // Zero-copy views of a delta record's key inside the frame.
    private final UnsafeBuffer namespaceView = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer hashView = new UnsafeBuffer(0, 0);
    private final JournalRecord record = new JournalRecord();
    private final DeltaBatchOutcome outcome = new DeltaBatchOutcome();

    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final PeerConnectDecoder connectDecoder = new PeerConnectDecoder();
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

    PeerAdapter(
        final PeerAgent agent,
        final PeerPublisher publisher,
        final PeerHandler handler,
        final CatalogRequestValidator validator,
        final PeerCounters counters,
        final ErrorHandler errorHandler,
        final int streamId,
        final TransferHandler transferHandler)
    {
        this.transferFrames = new TransferFrames(agent, publisher, counters, errorHandler, transferHandler);
        this.agent = agent;
        this.publisher = publisher;
        this.handler = handler;
        this.validator = validator;
        this.proxy = publisher.proxy();
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.streamId = streamId;
    }

    void nowNs(final long nowNs)
    {
        this.nowNs = nowNs;
    }

    public void onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        counters.add(PeerCounter.METADATA_BYTES_RECEIVED, length);
        currentSession = null;
        currentShard = NO_SHARD;
        currentCorrelationId = 0;
        try
        {
            frame.wrap(buffer, offset, length);
            if (length < MessageHeaderDecoder.ENCODED_LENGTH)
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            headerDecoder.wrap(frame, 0);
            if (TRANSFER_SCHEMA_ID == headerDecoder.schemaId())
            {
                // Same header layout in both schemas; a transfer frame is judged and counted on its own path.
                transferFrames.onFrame(
                    frame, length, headerDecoder.blockLength(), headerDecoder.version(), headerDecoder.templateId());
                return;
            }
            if (headerDecoder.schemaId() != MessageHeaderDecoder.SCHEMA_ID)
            {
                rejectFrame(CatalogStatus.SCHEMA_MISMATCH);
                return;
            }
            final int blockLength = headerDecoder.blockLength();
            final int version = headerDecoder.version();
            if (version < MIN_SCHEMA_VERSION)
            {
                // Newer versions are read through their block length (appended fields skipped); older never existed.
                rejectFrame(CatalogStatus.SCHEMA_MISMATCH);
                return;
            }
            switch (headerDecoder.templateId())
            {
                case PeerConnectDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_CONNECT);
                    if (blockOk(blockLength, PeerConnectDecoder.BLOCK_LENGTH, length))
                    {
                        connectDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onConnect();
                    }
                }
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
                    counters.increment(PeerCounter.FRAMES_RESPONSE);
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

    private void onConnect()
    {
        final RouteDecoder route = connectDecoder.route();
        final long correlationId = connectDecoder.correlationId();
        final int nodeIndex = connectDecoder.requesterNodeIndex();
        final int responseStreamId = connectDecoder.responseStreamId();
        final long senderMsb = route.senderIncarnation().msb();
        final long senderLsb = route.senderIncarnation().lsb();
        final CatalogStatus status = validator.checkRoute(route.shard(), route.placementFingerprint(),
            route.destinationIncarnation().msb(), route.destinationIncarnation().lsb(), false);
        final String responseChannel = connectDecoder.responseChannel();
        if (responseStreamId != streamId || !PeerTransport.isPeerChannel(responseChannel))
        {
            rejectFrame(CatalogStatus.MALFORMED);
            return;
        }
        if (CatalogStatus.OK != status)
        {
            // Counted here; the refusal is answered on the named response channel once it connects.
            countRejection(status);
        }
        agent.openSession(correlationId, nodeIndex, senderMsb, senderLsb, responseChannel, status);
    }

    /**
     * Common checks of a message to this peer as catalog host: an active session, the route, and that the session's
     * requester is the publisher named in the route.
     */
    private boolean acceptHostBound(final RouteDecoder route, final long sessionId, final boolean requireHostedShard)
    {
        final PeerSession session = agent.session(sessionId);
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
            publisher.client(sessionId, route.senderIncarnation().msb(), route.senderIncarnation().lsb());
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
        if (records.count() > PeerProxy.MAX_DELTA_BATCH_RECORDS)
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
        if (records.count() > PeerProxy.MAX_DELTA_BATCH_RECORDS)
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
        final PeerSession session = agent.session(sessionId);
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
        final UnsafeBuffer out = proxy.buffer();
        final int replyLength = handler.onColdQuery(session, frame, 0, length, out, 0);
        final CatalogStatus status = handler.lastColdQueryStatus();
        if (CatalogStatus.OK != status)
        {
            countRejection(status);
        }
        final ExclusivePublication publication = publisher.publication(session);
        if (proxy.offer(publication, out, 0, replyLength))
        {
            counters.increment(PeerCounter.RESPONSES_SENT);
        }
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
        final PeerClient connecting =
            publisher.connectingClient(correlationId, route.senderIncarnation().msb(), route.senderIncarnation().lsb());
        if (null != connecting && CatalogStatus.OK != code)
        {
            // A refusal can only stop this client, so it is taken even when this peer's placement differs.
            publisher.onConnectResponse(connecting, sessionId, code);
            return;
        }
        if (null != connecting)
        {
            final CatalogStatus status = validator.checkRoute(route.shard(), route.placementFingerprint(),
                route.destinationIncarnation().msb(), route.destinationIncarnation().lsb(), false);
            if (CatalogStatus.OK != status)
            {
                reject(status);
                return;
            }
            publisher.onConnectResponse(connecting, sessionId, code);
            return;
        }
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
        final ExclusivePublication publication = publisher.publication(session);
        if (DeltaBatchOutcome.NO_ACK != outcome.ackSequence())
        {
            proxy.ack(publication, session, shard, outcome.ackSequence());
        }
        if (outcome.repairRequested())
        {
            proxy.gapRepair(
                publication, session, shard, publisher.nextCorrelationId(), outcome.repairFrom(), outcome.repairTo());
        }
    }

    private void rejectFrame(final CatalogStatus status)
    {
        switch (status)
        {
            case SCHEMA_MISMATCH -> errorHandler.onError(WRONG_SCHEMA_FRAME);
            case UNKNOWN_TEMPLATE -> errorHandler.onError(UNKNOWN_TEMPLATE_FRAME);
            default -> errorHandler.onError(MALFORMED_FRAME);
        }
        reject(status);
    }

    private void reject(final CatalogStatus status)
    {
        countRejection(status);
        final PeerSession session = currentSession;
        if (null != session && session.isActive())
        {
            proxy.response(publisher.publication(session), session.requesterIncarnationMsb(),
                session.requesterIncarnationLsb(), currentShard, session.sessionId(), currentCorrelationId, status, -1);
        }
    }

    private void countRejection(final CatalogStatus status)
    {
        switch (status)
        {
            case MALFORMED -> counters.increment(PeerCounter.REJECTED_MALFORMED);
            case SCHEMA_MISMATCH -> counters.increment(PeerCounter.REJECTED_WRONG_SCHEMA);
            case UNKNOWN_TEMPLATE -> counters.increment(PeerCounter.REJECTED_UNKNOWN_TEMPLATE);
            case WRONG_FINGERPRINT -> counters.increment(PeerCounter.REJECTED_WRONG_FINGERPRINT);
            case WRONG_DESTINATION -> counters.increment(PeerCounter.REJECTED_WRONG_DESTINATION);
            case STALE_INCARNATION -> counters.increment(PeerCounter.REJECTED_STALE_INCARNATION);
            case UNREGISTERED_PUBLISHER -> counters.increment(PeerCounter.REJECTED_UNREGISTERED_PUBLISHER);
            case CROSS_SHARD_KEY -> counters.increment(PeerCounter.REJECTED_CROSS_SHARD_KEY);
            case BATCH_TOO_LARGE -> counters.increment(PeerCounter.REJECTED_BATCH_TOO_LARGE);
            default ->
            {
                // Other statuses (RESYNC_REQUIRED, BUDGET_EXCEEDED, ERROR) are counted by the catalog logic itself.
            }
        }
    }
}
