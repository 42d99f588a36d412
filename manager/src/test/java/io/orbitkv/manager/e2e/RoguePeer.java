package io.orbitkv.manager.e2e;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
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
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.manager.catalog.CatalogAdapter;
import io.orbitkv.manager.catalog.CatalogHostHandler;
import io.orbitkv.manager.catalog.CatalogProxy;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.PeerTransport;
import org.agrona.BufferUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;

/**
 * A catalog peer outside the cluster for the end-to-end tests: a real {@link PeerTransport} on a free loopback UDP
 * port with its own owner journal, from which a test sends frames a Manager must refuse (wrong fingerprint, a
 * publisher that is no member, a retired incarnation). Hosts a directory the way the Manager does, records the
 * transport's errors and every refusal the Manager answers (shown when a test times out).
 * <p>
 * Not thread safe: the test thread drives {@link #doWork()}.
 */
final class RoguePeer extends CatalogHostHandler implements AutoCloseable
{
    private ColdQueryHandler coldQueries;
    private final CatalogDirectory directory;
    private final OwnerJournal journal;
    private final PeerTransport transport;
    private final CatalogProxy catalogProxy;
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();

    RoguePeer(
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
        this.journal = new OwnerJournal(CatalogLimits.SHARD_COUNT, journalBudgetBytes,
            OwnerJournal.DEFAULT_SEGMENT_BYTES, OwnerJournal.DEFAULT_MAX_RECEIVERS_PER_SHARD);
        this.directory = new CatalogDirectory(hostedShards, new HostBudget());
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
            .errorHandler(errors::add));
        coldQueries = new ColdQueryHandler(validator, directory, incarnationMsb, incarnationLsb);
        catalogProxy = new CatalogProxy(transport.publisher());
        transport.newAgent(validator::checkRoute,
            new CatalogAdapter(transport.publisher(), transport.counters(), errors::add, catalogProxy, validator, this),
            CatalogAdapter.transferFramesDropped(transport.counters()));
    }

    static boolean[] allShards()
    {
        final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
        Arrays.fill(hosted, true);
        return hosted;
    }

    private static int freeUdpPort()
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

    int doWork()
    {
        return transport.doWork();
    }

    OwnerJournal journal()
    {
        return journal;
    }

    List<Throwable> errors()
    {
        return errors;
    }

    protected ShardReceiver receiverOf(final PeerSession session, final int shard)
    {
        return directory.receiver(session.requesterNodeIndex(), shard);
    }

    public void onAck(final PeerClient client, final int shard, final long contiguousSequence)
    {
    }

    public void onGapRepair(
        final PeerClient client, final int shard, final long correlationId, final long fromSequence,
        final long toSequence)
    {
    }

    public void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response)
    {
    }

    public void onResponse(
        final PeerClient client, final int shard, final long correlationId, final CatalogStatus code,
        final long relevantSequence)
    {
        if (CatalogStatus.OK != code)
        {
            errors.add(new IllegalStateException("peer " + client.remoteNodeIndex() + " answered " + code +
                " (correlation " + correlationId + ", sequence " + relevantSequence + ")"));
        }
    }

    public void close()
    {
        transport.close();
    }
}
