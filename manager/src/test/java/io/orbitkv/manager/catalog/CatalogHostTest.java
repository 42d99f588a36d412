package io.orbitkv.manager.catalog;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.CatalogResponseDecoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.codecs.catalog.Coverage;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder.RowsDecoder;
import io.orbitkv.manager.membership.MovePhase;
import io.orbitkv.manager.membership.PlacementState;
import io.orbitkv.manager.membership.PlacementTransition;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.TestPeerSessions;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The catalog host alone: its directory, validator and cold-query answers, driven through the
 * {@link CatalogHostHandler} the peer agent delivers to, with sessions made by hand. No transport, no etcd: an owner's
 * deltas go in, a requester's cold query comes out with the owner's residence, and the refusals are the handler's.
 */
class CatalogHostTest
{
    private static final ShardPlacement PLACEMENT = ShardPlacement.parse("a");
    private static final long HOST_MSB = 0x40L;
    private static final long HOST_LSB = 0x41L;
    private static final long OWNER_MSB = 0xA1L;
    private static final long OWNER_LSB = 0xB1L;
    private static final long REQUESTER_MSB = 0xC1L;
    private static final long REQUESTER_LSB = 0xD1L;
    private static final int OWNER_SLOT = 3;
    private static final byte[] NAMESPACE = "model=host-test".getBytes(StandardCharsets.US_ASCII);

    private final CatalogHost host = new CatalogHost("a", PlacementState.stable(1, PLACEMENT), HOST_MSB, HOST_LSB);
    private final Host handler = new Host(host);
    private final UnsafeBuffer namespace = new UnsafeBuffer(NAMESPACE);
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
    private final UnsafeBuffer request = new UnsafeBuffer(new byte[4096]);
    private final UnsafeBuffer reply = new UnsafeBuffer(new byte[4096]);
    private final PeerSession owner = TestPeerSessions.active(9, OWNER_SLOT, OWNER_MSB, OWNER_LSB);
    private final PeerSession requester = TestPeerSessions.active(10, 5, REQUESTER_MSB, REQUESTER_LSB);
    private int shard;

    @BeforeEach
    void setUp()
    {
        hash.putLong(0, 0x0DDB_A11L);
        shard = new StateKeyShard().shard(namespace, 0, NAMESPACE.length, hash, 0, hash.capacity());
        host.directory().addOwner(OWNER_SLOT);
        host.directory().receiver(OWNER_SLOT, shard).admitIncarnation(OWNER_MSB, OWNER_LSB);
    }

    @Test
    void shouldAnswerAColdQueryWithTheResidenceAnOwnerStreamed()
    {
        final JournalRecord record = new JournalRecord()
            .set(1, JournalRecord.TIER_DRAM, JournalRecord.OP_ADD, 1, 77, 4096)
            .key(namespace, 0, NAMESPACE.length, hash, 0, hash.capacity());
        assertEquals(CatalogStatus.OK, handler.onDelta(owner, shard, OWNER_MSB, OWNER_LSB, record));
        handler.onDeltaBatchEnd(owner, shard, 0, new DeltaBatchOutcome());

        final int length = handler.onColdQuery(requester, request, 0, query(host.validator().sendFingerprint()), reply, 0);

        assertEquals(CatalogStatus.OK, handler.lastColdQueryStatus());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(reply, 0);
        assertEquals(ColdQueryResponseDecoder.TEMPLATE_ID, header.templateId());
        final ColdQueryResponseDecoder response = new ColdQueryResponseDecoder().wrapAndApplyHeader(reply, 0, header);
        assertEquals(42, response.correlationId());
        final RowsDecoder rows = response.rows();
        assertEquals(1, rows.count());
        rows.next();
        assertEquals(0, rows.rowIndex());
        assertEquals(Coverage.COMPLETE, rows.coverage());
        final RowsDecoder.CandidatesDecoder candidates = rows.candidates();
        assertEquals(1, candidates.count());
        candidates.next();
        assertEquals(OWNER_MSB, candidates.ownerIncarnation().msb());
        assertEquals(OWNER_LSB, candidates.ownerIncarnation().lsb());
        assertEquals(77, candidates.insertionSequence());
        assertTrue(length > 0);
    }

    @Test
    void shouldRefuseAQueryFromAnotherPlacementWithAStatusTheTransportCounts()
    {
        handler.onColdQuery(requester, request, 0, query(host.validator().sendFingerprint() + 1), reply, 0);

        assertEquals(CatalogStatus.WRONG_FINGERPRINT, handler.lastColdQueryStatus());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(reply, 0);
        assertEquals(CatalogResponseDecoder.TEMPLATE_ID, header.templateId());
        assertEquals(CatalogStatus.WRONG_FINGERPRINT,
            new CatalogResponseDecoder().wrapAndApplyHeader(reply, 0, header).code());
        assertEquals(1, host.coldQueryHandler().rejected());
    }

    @Test
    void shouldRefuseDeltasOfAnUnknownPublisherAndOfARetiredIncarnation()
    {
        final JournalRecord record = new JournalRecord()
            .set(1, JournalRecord.TIER_DRAM, JournalRecord.OP_ADD, 1, 77, 4096)
            .key(namespace, 0, NAMESPACE.length, hash, 0, hash.capacity());
        final PeerSession stranger = TestPeerSessions.active(11, 7, 0xE1L, 0xF1L);
        assertEquals(CatalogStatus.UNREGISTERED_PUBLISHER, handler.onDelta(stranger, shard, 0xE1L, 0xF1L, record));

        host.directory().receiver(OWNER_SLOT, shard).admitIncarnation(OWNER_MSB + 1, OWNER_LSB);
        assertEquals(CatalogStatus.STALE_INCARNATION, handler.onDelta(owner, shard, OWNER_MSB, OWNER_LSB, record),
            "the owner's restart retired its old incarnation");
    }

    @Test
    void shouldHostAShardAMoveBringsUntilItsSnapshotArrivesAndFreeItWhenRetired()
    {
        final ShardPlacement onlyB = ShardPlacement.parse("b");
        final ShardPlacement both = ShardPlacement.parse("a,b", 2);
        final CatalogHost joining = new CatalogHost("a", PlacementState.stable(1, onlyB), HOST_MSB, HOST_LSB);
        joining.directory().addOwner(OWNER_SLOT);
        assertFalse(joining.hostsShard(shard));
        assertNull(joining.directory().receiver(OWNER_SLOT, shard));

        PlacementTransition move = PlacementTransition.plan(1, onlyB, 2, both);
        move = move.with(move.move(shard).advance(MovePhase.PREPARE, Map.of()));
        assertEquals(1, joining.applyPlacement(new PlacementState(1, onlyB, move)));
        assertTrue(joining.hostsShard(shard));
        final ShardReceiver receiver = joining.directory().receiver(OWNER_SLOT, shard);
        receiver.admitIncarnation(OWNER_MSB, OWNER_LSB);
        assertFalse(joining.shardComplete(shard, OWNER_SLOT + 1, true), "no snapshot from the owner yet");
        assertEquals(1, joining.incompleteShards(OWNER_SLOT + 1, true));
        assertEquals(both.routeFingerprint(2), joining.validator().sendFingerprint());

        final long reservedBefore = joining.directory().budget().reservedBytes();
        assertEquals(1, joining.applyPlacement(PlacementState.stable(3, onlyB)));
        assertFalse(joining.hostsShard(shard));
        assertNull(joining.directory().receiver(OWNER_SLOT, shard));
        assertTrue(joining.directory().budget().reservedBytes() <= reservedBefore);
        assertEquals(0, joining.incompleteShards(OWNER_SLOT + 1, true));
    }

    @Test
    void shouldRefuseAndCountARouteOfAnEarlierGeneration()
    {
        final ShardPlacement next = ShardPlacement.parse("a,b", 2);
        final long generationOne = host.validator().sendFingerprint();
        host.applyPlacement(PlacementState.stable(2, next));
        assertTrue(host.hostsShard(shard), "a holds every shard of a two-node, two-copy placement");

        handler.onColdQuery(requester, request, 0, query(generationOne), reply, 0);
        assertEquals(CatalogStatus.WRONG_FINGERPRINT, handler.lastColdQueryStatus());
        assertEquals(1, host.validator().staleGenerations());

        handler.onColdQuery(requester, request, 0, query(generationOne ^ 0x5A5AL), reply, 0);
        assertEquals(CatalogStatus.WRONG_FINGERPRINT, handler.lastColdQueryStatus());
        assertEquals(1, host.validator().staleGenerations(), "a foreign placement is not a stale generation");

        handler.onColdQuery(requester, request, 0, query(next.routeFingerprint(2)), reply, 0);
        assertEquals(CatalogStatus.OK, handler.lastColdQueryStatus());
    }

    private int query(final long fingerprint)
    {
        final ColdQueryEncoder encoder = new ColdQueryEncoder().wrapAndApplyHeader(request, 0, new MessageHeaderEncoder());
        encoder.route().shard((short)shard).placementFingerprint(fingerprint);
        encoder.route().destinationIncarnation().msb(HOST_MSB).lsb(HOST_LSB);
        encoder.route().senderIncarnation().msb(REQUESTER_MSB).lsb(REQUESTER_LSB);
        encoder.sessionId(requester.sessionId()).correlationId(42);
        encoder.keysCount(1).next().shard((short)shard)
            .putKeyNamespace(namespace, 0, NAMESPACE.length)
            .putKeyHash(hash, 0, hash.capacity());
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /**
     * The host half only: a session's publisher is its node index's owner slot, as the member view would map it.
     */
    private static final class Host extends CatalogHostHandler
    {
        private final CatalogHost host;

        Host(final CatalogHost host)
        {
            this.host = host;
        }

        protected io.orbitkv.catalog.ColdQueryHandler coldQueryHandler()
        {
            return host.coldQueryHandler();
        }

        protected ShardReceiver receiverOf(final PeerSession session, final int shard)
        {
            return host.directory().receiver(session.requesterNodeIndex(), shard);
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
        }
    }
}
