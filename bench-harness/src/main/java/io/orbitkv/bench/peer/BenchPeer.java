package io.orbitkv.bench.peer;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import io.orbitkv.catalog.CatalogDirectory;
import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.HostBudget;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.catalog.CatalogAdapter;
import io.orbitkv.manager.catalog.CatalogHostHandler;
import io.orbitkv.manager.catalog.CatalogProxy;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.PeerTransport;
import org.agrona.BufferUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;

/**
 * One catalog peer for benchmarks: a {@link PeerTransport} on a free loopback UDP port with a catalog directory over
 * the shards it hosts and an owner journal, wired the way the Manager wires it (the production twin of the peer tests'
 * {@code PeerNode}): deltas and snapshots into {@link ShardReceiver}s, acks into the {@link OwnerJournal}, gap
 * repairs served from it. Adds what a benchmark observes: records applied (readable from another thread), a
 * listener for contiguous progress (update lag) and one for cold-query responses.
 * <p>
 * Like the transport, not thread safe: one thread drives {@link #doWork()} and everything the handler touches.
 */
public final class BenchPeer extends CatalogHostHandler implements AutoCloseable
{
    /**
     * Largest node index a benchmark uses (receiver slot table bound).
     */
    public static final int MAX_NODES = 64;

    /**
     * Host: a receiver's contiguous sequence advanced (called on the host's thread after the batch was applied).
     */
    @FunctionalInterface
    public interface ProgressListener
    {
        void onContiguous(int hostNode, int ownerNode, int shard, long contiguousSequence);
    }

    /**
     * Requester: a cold-query response arrived (decoder valid during the call only).
     */
    @FunctionalInterface
    public interface ColdResponseListener
    {
        void onColdQueryResponse(PeerClient client, ColdQueryResponseDecoder response);
    }

    private ColdQueryHandler coldQueries;
    private final int nodeIndex;
    private final long incarnationMsb;
    private final long incarnationLsb;
    private final CatalogDirectory directory;
    private final OwnerJournal journal;
    private final PeerTransport transport;
    private final CatalogProxy catalogProxy;
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final int[][] receiverSlots = new int[MAX_NODES][CatalogLimits.SHARD_COUNT];
    private final AtomicLong appliedPublished = new AtomicLong();
    private long applied;
    private long rejections;
    private long resyncResponses;
    private long repairsServed;
    private ProgressListener progressListener;
    private ColdResponseListener coldResponseListener;

    /**
     * @param dir                parent of this peer's Aeron directory.
     * @param hostedShards       shards this peer hosts as catalog host.
     * @param journalBudgetBytes owner journal budget (all shards).
     * @param termLength         peer publication term length.
     * @param driverIdleStrategy idle strategy of an embedded driver on its own thread (one instance per peer), or
     *                           null for a driver invoked from the peer's duty cycle.
     */
    public BenchPeer(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long placementFingerprint,
        final boolean[] hostedShards,
        final long journalBudgetBytes,
        final int termLength,
        final IdleStrategy driverIdleStrategy)
    {
        this(dir, nodeIndex, incarnationMsb, incarnationLsb, placementFingerprint, hostedShards, journalBudgetBytes,
            termLength, driverIdleStrategy, null);
    }

    /**
     * @param frameMacKey the frame MAC key of an authenticated peer channel ({@code --cluster-secret-file}), or null.
     */
    public BenchPeer(
        final Path dir,
        final int nodeIndex,
        final long incarnationMsb,
        final long incarnationLsb,
        final long placementFingerprint,
        final boolean[] hostedShards,
        final long journalBudgetBytes,
        final int termLength,
        final IdleStrategy driverIdleStrategy,
        final byte[] frameMacKey)
    {
        if (nodeIndex < 0 || nodeIndex >= MAX_NODES)
        {
            throw new IllegalArgumentException("node index must be 0.." + (MAX_NODES - 1) + ": " + nodeIndex);
        }
        this.nodeIndex = nodeIndex;
        this.incarnationMsb = incarnationMsb;
        this.incarnationLsb = incarnationLsb;
        this.journal = new OwnerJournal(CatalogLimits.SHARD_COUNT, journalBudgetBytes,
            OwnerJournal.DEFAULT_SEGMENT_BYTES, OwnerJournal.DEFAULT_MAX_RECEIVERS_PER_SHARD);
        this.directory = new CatalogDirectory(hostedShards, new HostBudget());
        for (final int[] slots : receiverSlots)
        {
            Arrays.fill(slots, -1);
        }
        final CatalogRequestValidator validator =
            new CatalogRequestValidator(incarnationMsb, incarnationLsb, placementFingerprint, hostedShards);
        final CountersManager countersManager = new CountersManager(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(64 * 1024 * 4, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(64 * 1024, 64)));
        transport = PeerTransport.launch(new PeerTransport.Context()
            .endpoint("127.0.0.1:" + freeUdpPort())
            .directory(dir.resolve("node-" + nodeIndex))
            .termLength(termLength)
            .driverIdleStrategy(driverIdleStrategy)
            .localNodeIndex(nodeIndex)
            .incarnation(incarnationMsb, incarnationLsb)
            .placementFingerprint(placementFingerprint)
            .countersManager(countersManager)
            .frameMacKey(frameMacKey)
            .errorHandler(errors::add));
        coldQueries = new ColdQueryHandler(validator, directory, incarnationMsb, incarnationLsb);
        catalogProxy = new CatalogProxy(transport.publisher());
        transport.newAgent(validator::checkRoute,
            new CatalogAdapter(transport.publisher(), transport.counters(), errors::add, catalogProxy, validator, this),
            CatalogAdapter.transferFramesDropped(transport.counters()));
    }

    public static boolean[] allShards()
    {
        final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
        Arrays.fill(hosted, true);
        return hosted;
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

    public int nodeIndex()
    {
        return nodeIndex;
    }

    public long incarnationMsb()
    {
        return incarnationMsb;
    }

    public long incarnationLsb()
    {
        return incarnationLsb;
    }

    public PeerTransport transport()
    {
        return transport;
    }

    protected ColdQueryHandler coldQueryHandler()
    {
        return coldQueries;
    }

    public PeerAgent agent()
    {
        return transport.agent();
    }

    /**
     * @return the encoder of this peer's catalog messages (delta batches, cold queries, snapshots).
     */
    public CatalogProxy catalogProxy()
    {
        return catalogProxy;
    }

    public PeerPublisher publisher()
    {
        return transport.publisher();
    }

    public int doWork()
    {
        return transport.doWork();
    }

    public CatalogDirectory directory()
    {
        return directory;
    }

    public OwnerJournal journal()
    {
        return journal;
    }

    public List<Throwable> errors()
    {
        return errors;
    }

    public long counter(final PeerCounter counter)
    {
        return transport.counters().value(counter);
    }

    /**
     * @return delta records applied at this host, published at the end of each batch (any thread may read).
     */
    public long appliedRecords()
    {
        return appliedPublished.get();
    }

    /**
     * @return delta records or snapshot frames this host rejected, and RESYNC_REQUIRED answers this owner received.
     */
    public long rejections()
    {
        return rejections + resyncResponses;
    }

    public long repairsServed()
    {
        return repairsServed;
    }

    public void progressListener(final ProgressListener listener)
    {
        this.progressListener = listener;
    }

    public void coldResponseListener(final ColdResponseListener listener)
    {
        this.coldResponseListener = listener;
    }

    /**
     * Host: the member view shows an owner node with an incarnation, admitted on every shard hosted here.
     */
    public void admitOwner(final int ownerNode, final long msb, final long lsb)
    {
        directory.addOwner(ownerNode);
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            final ShardReceiver receiver = directory.receiver(ownerNode, s);
            if (null != receiver)
            {
                receiver.admitIncarnation(msb, lsb);
            }
        }
    }

    /**
     * Owner: the journal receiver slot of a host for a shard (registered on first use).
     */
    public int receiverSlot(final int hostNode, final int shard)
    {
        if (receiverSlots[hostNode][shard] < 0)
        {
            final int slot = journal.addReceiver(shard);
            if (OwnerJournal.NO_RECEIVER_SLOT == slot)
            {
                throw new IllegalStateException("no journal receiver slot left for shard " + shard);
            }
            receiverSlots[hostNode][shard] = slot;
        }
        return receiverSlots[hostNode][shard];
    }

    /**
     * Owner: stop retaining journal records for a host that left.
     */
    public void removeReceivers(final int hostNode)
    {
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (receiverSlots[hostNode][s] >= 0)
            {
                journal.removeReceiver(s, receiverSlots[hostNode][s]);
                receiverSlots[hostNode][s] = -1;
            }
        }
    }

    public long ackedSequence(final int hostNode, final int shard)
    {
        final int slot = receiverSlots[hostNode][shard];
        return slot < 0 ? 0 : journal.ackedSequence(shard, slot);
    }

    protected ShardReceiver receiverOf(final PeerSession session, final int shard)
    {
        return directory.receiver(session.requesterNodeIndex(), shard);
    }

    protected void onDeltaOutcome(final int outcome)
    {
        if (ShardReceiver.APPLIED == outcome)
        {
            applied++;
        }
    }

    protected void onStatus(final CatalogStatus status)
    {
        if (CatalogStatus.OK != status)
        {
            rejections++;
        }
    }

    protected void onBatchApplied(final PeerSession session, final int shard, final ShardReceiver receiver)
    {
        appliedPublished.setRelease(applied);
        if (null != progressListener)
        {
            progressListener.onContiguous(nodeIndex, session.requesterNodeIndex(), shard, receiver.contiguousSequence());
        }
    }

    public void onAck(final PeerClient client, final int shard, final long contiguousSequence)
    {
        journal.onAck(shard, receiverSlot(client.remoteNodeIndex(), shard), contiguousSequence);
    }

    public void onGapRepair(
        final PeerClient client, final int shard, final long correlationId, final long fromSequence,
        final long toSequence)
    {
        // Serve from the journal: everything retained from the first missing sequence on, since the host dropped
        // the records after the gap too.
        final int sent = catalogProxy.sendDeltaBatch(client, shard, journal, fromSequence, catalogProxy.maxBatchRecords());
        if (OwnerJournal.READ_RESYNC_REQUIRED == sent)
        {
            catalogProxy.sendResponse(client, shard, correlationId, CatalogStatus.RESYNC_REQUIRED, fromSequence - 1);
        }
        repairsServed++;
    }

    public void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response)
    {
        if (null != coldResponseListener)
        {
            coldResponseListener.onColdQueryResponse(client, response);
        }
    }

    public void onResponse(
        final PeerClient client, final int shard, final long correlationId, final CatalogStatus code,
        final long relevantSequence)
    {
        if (CatalogStatus.OK != code)
        {
            resyncResponses++;
            errors.add(new IllegalStateException("peer " + client.remoteNodeIndex() + " answered " + code +
                " (correlation " + correlationId + ", sequence " + relevantSequence + ")"));
        }
    }

    public void close()
    {
        transport.close();
    }
}
