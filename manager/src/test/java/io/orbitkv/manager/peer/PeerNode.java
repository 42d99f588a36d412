package io.orbitkv.manager.peer;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.orbitkv.catalog.CatalogDirectory;
import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.HostBudget;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.manager.catalog.CatalogAdapter;
import io.orbitkv.manager.catalog.CatalogHostHandler;
import io.orbitkv.manager.catalog.CatalogProxy;
import io.orbitkv.manager.transfer.TransferAdapter;
import io.orbitkv.manager.transfer.TransferHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;

/**
 * One peer for tests: a catalog host (directory over all 16 shards) and an owner (journal) behind a real
 * {@link PeerTransport} on a free loopback UDP port, with a handler that records what arrives the way the Manager
 * will wire it: deltas into {@link ShardReceiver}s, acks into the {@link OwnerJournal}, repairs served from it.
 */
final class PeerNode extends CatalogHostHandler implements AutoCloseable
{
    static final long FINGERPRINT = 0x5EED_F00DL;

    private ColdQueryHandler coldQueries;
    final int nodeIndex;
    final long incarnationMsb;
    final long incarnationLsb;
    final CatalogDirectory directory;
    final OwnerJournal journal = new OwnerJournal();
    final List<Throwable> errors = new CopyOnWriteArrayList<>();
    final List<CatalogStatus> responseCodes = new ArrayList<>();
    final List<long[]> coldRows = new ArrayList<>();
    final int[] journalReceiver = new int[CatalogLimits.SHARD_COUNT];
    final PeerTransport transport;
    final io.orbitkv.manager.status.SystemCounters authCounters =
        io.orbitkv.manager.status.SystemCounters.inMemory(PeerAuthCounter.values(), PeerGuardCounter.values());
    private final CatalogProxy catalogProxy;
    long coldResponses;
    long repairsServed;
    long lastAck = -1;

    PeerNode(final Path dir, final int nodeIndex, final long incarnationMsb, final long incarnationLsb)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, FINGERPRINT, PeerTransport.AUTO_MTU);
    }

    PeerNode(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long fingerprint)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, fingerprint, PeerTransport.AUTO_MTU);
    }

    PeerNode(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long fingerprint,
        final int mtuLength)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, fingerprint, mtuLength, false);
    }

    PeerNode(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long fingerprint,
        final int mtuLength,
        final boolean driverThread)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, fingerprint, mtuLength, driverThread,
            org.agrona.concurrent.SystemNanoClock.INSTANCE);
    }

    /**
     * @param driverThread give the embedded driver a thread of its own (default: invoked from the duty cycle).
     * @param clock        the transport's clock (a test may hold time still).
     */
    PeerNode(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long fingerprint,
        final int mtuLength,
        final boolean driverThread,
        final org.agrona.concurrent.NanoClock clock)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, fingerprint, mtuLength, driverThread, clock, null);
    }

    /**
     * @param transferHandler where transfer frames go, or null.
     */
    PeerNode(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long fingerprint,
        final int mtuLength,
        final boolean driverThread,
        final org.agrona.concurrent.NanoClock clock,
        final TransferHandler transferHandler)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, fingerprint, mtuLength, driverThread, clock, transferHandler,
            null);
    }

    /**
     * @param frameMacKey the frame MAC key of an authenticated channel, or null.
     */
    PeerNode(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long fingerprint,
        final int mtuLength,
        final boolean driverThread,
        final org.agrona.concurrent.NanoClock clock,
        final TransferHandler transferHandler,
        final byte[] frameMacKey)
    {
        this.nodeIndex = nodeIndex;
        this.incarnationMsb = incarnationMsb;
        this.incarnationLsb = incarnationLsb;
        final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
        Arrays.fill(hosted, true);
        directory = new CatalogDirectory(hosted, new HostBudget());
        final CatalogRequestValidator validator =
            new CatalogRequestValidator(incarnationMsb, incarnationLsb, fingerprint, hosted);
        Arrays.fill(journalReceiver, -1);
        final CountersManager countersManager = new CountersManager(
            new UnsafeBuffer(new byte[64 * 1024 * 4]), new UnsafeBuffer(new byte[64 * 1024]));
        transport = PeerTransport.launch(new PeerTransport.Context()
            .endpoint("127.0.0.1:" + freeUdpPort())
            .mtuLength(mtuLength)
            .driverIdleStrategy(driverThread ? PeerTransport.Context.backoffDriverIdleStrategy() : null)
            .directory(dir.resolve("node-" + nodeIndex))
            .localNodeIndex(nodeIndex)
            .incarnation(incarnationMsb, incarnationLsb)
            .placementFingerprint(fingerprint)
            .countersManager(countersManager)
            .nanoClock(clock)
            .frameMacKey(frameMacKey)
            .systemCounters(authCounters)
            .errorHandler(errors::add));
        coldQueries = new ColdQueryHandler(validator, directory, incarnationMsb, incarnationLsb);
        catalogProxy = new CatalogProxy(transport.publisher());
        transport.newAgent(validator::checkRoute,
            new CatalogAdapter(transport.publisher(), transport.counters(), errors::add, catalogProxy, validator, this),
            new TransferAdapter(transport.publisher(), transferHandler));
    }

    static int freeUdpPort()
    {
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    protected ColdQueryHandler coldQueryHandler()
    {
        return coldQueries;
    }

    PeerAgent agent()
    {
        return transport.agent();
    }

    PeerPublisher publisher()
    {
        return transport.publisher();
    }

    CatalogProxy catalogProxy()
    {
        return catalogProxy;
    }

    long counter(final PeerCounter counter)
    {
        return transport.counters().value(counter);
    }

    long counter(final PeerAuthCounter counter)
    {
        return authCounters.value(counter);
    }

    long counter(final PeerGuardCounter counter)
    {
        return authCounters.value(counter);
    }

    /**
     * The member view on this host shows an owner node with an incarnation (admitted on every shard).
     */
    void admitOwner(final int ownerNode, final long msb, final long lsb)
    {
        directory.addOwner(ownerNode);
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            directory.receiver(ownerNode, s).admitIncarnation(msb, lsb);
        }
    }

    int receiverSlot(final int shard)
    {
        if (journalReceiver[shard] < 0)
        {
            journalReceiver[shard] = journal.addReceiver(shard);
        }
        return journalReceiver[shard];
    }

    protected ShardReceiver receiverOf(final PeerSession session, final int shard)
    {
        return directory.receiver(session.requesterNodeIndex(), shard);
    }

    public void onAck(final PeerClient client, final int shard, final long contiguousSequence)
    {
        journal.onAck(shard, receiverSlot(shard), contiguousSequence);
        lastAck = contiguousSequence;
    }

    public void onGapRepair(
        final PeerClient client, final int shard, final long correlationId, final long fromSequence,
        final long toSequence)
    {
        // Serve from the journal: everything retained from the first missing sequence on, since the host dropped
        // the records after the gap too.
        final int sent = catalogProxy.sendDeltaBatch(client, shard, journal, fromSequence, CatalogProxy.MAX_DELTA_BATCH_RECORDS);
        if (OwnerJournal.READ_RESYNC_REQUIRED == sent)
        {
            catalogProxy.sendResponse(client, shard, correlationId, CatalogStatus.RESYNC_REQUIRED, fromSequence - 1);
        }
        repairsServed++;
    }

    public void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response)
    {
        coldResponses++;
        final ColdQueryResponseDecoder.RowsDecoder rows = response.rows();
        while (rows.hasNext())
        {
            rows.next();
            final int rowIndex = rows.rowIndex();
            final int coverage = rows.coverageRaw();
            final ColdQueryResponseDecoder.RowsDecoder.CandidatesDecoder candidates = rows.candidates();
            final long[] row = new long[3 + candidates.count()];
            row[0] = rowIndex;
            row[1] = coverage;
            row[2] = candidates.count();
            int c = 3;
            while (candidates.hasNext())
            {
                candidates.next();
                row[c++] = candidates.insertionSequence();
            }
            coldRows.add(row);
        }
    }

    public void onResponse(
        final PeerClient client, final int shard, final long correlationId, final CatalogStatus code, final long relevantSequence)
    {
        responseCodes.add(code);
    }

    public void close()
    {
        transport.close();
    }
}
