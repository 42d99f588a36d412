package io.orbitkv.manager.membership;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.orbitkv.codecs.ShardPlacement;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;

/**
 * The etcd transactions of joining a cluster, run on the lease keeper's thread: install the cluster's first
 * placement or adopt the installed one, and register one incarnation under a granted lease (epoch + 1 and the leased member record in one
 * transaction). Every call may throw {@link EtcdGateway.EtcdCallException} for the caller to retry; the set of this
 * process's runtime UUIDs, shared with {@link Membership}, tells an earlier incarnation's record from a stranger's.
 */
final class MemberRegistrar
{
    private final MembershipSettings settings;
    private final EtcdGateway etcd;
    private final PrintStream log;
    private final Set<UUID> ownRuntimeUuids;

    MemberRegistrar(
        final MembershipSettings settings, final EtcdGateway etcd, final PrintStream log, final Set<UUID> ownRuntimeUuids)
    {
        this.settings = settings;
        this.etcd = etcd;
        this.log = log;
        this.ownRuntimeUuids = ownRuntimeUuids;
    }

    /**
     * Install this Manager's placement as generation 1 when the cluster has none, else adopt the one installed: one
     * transaction "create if absent, else return what is there". A Manager whose {@code --catalog-nodes} or
     * {@code --catalog-replicas} differ follows etcd (logged): placement changes go through
     * {@code orbitkv placement set}, never through a Manager's flags. A retried unknown outcome finds its own write.
     *
     * @return the installed generation and placement this Manager starts from.
     * @throws EtcdGateway.EtcdCallException if etcd did not answer (the caller retries).
     * @throws IllegalStateException if the installed record is unreadable (the caller retries).
     */
    PlacementRecord.Generational installOrAdoptPlacement()
    {
        final ShardPlacement mine = settings.placement();
        final String key = MembershipConfiguration.placementKey(settings.clusterName());
        final TxnResponse response = etcd.txn(
            new Cmp[]{new Cmp(EtcdGateway.bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(0))},
            new Op[]{Op.put(EtcdGateway.bytes(key), EtcdGateway.bytes(PlacementRecord.encode(mine)), PutOption.DEFAULT)},
            new Op[]{Op.get(EtcdGateway.bytes(key), GetOption.DEFAULT)});
        if (response.isSucceeded())
        {
            log.println("orbitkv membership: installed placement generation 1: " + PlacementRecord.describe(mine) +
                " at " + key);
            return new PlacementRecord.Generational(PlacementRecord.FIRST_GENERATION, mine);
        }
        final KeyValue kv = response.getGetResponses().get(0).getKvs().get(0);
        final PlacementRecord.Generational installed = PlacementRecord.decodeGenerational(kv.getValue().getBytes());
        if (!installed.placement().equals(mine))
        {
            log.println("orbitkv membership: following the cluster's placement generation " + installed.generation() +
                ": " + PlacementRecord.describe(installed.placement()) + " (this Manager's --catalog-nodes and " +
                "--catalog-replicas give " + PlacementRecord.describe(mine) + "; they only seed an empty cluster, " +
                "orbitkv placement set changes the placement)");
        }
        return installed;
    }

    /**
     * Register an incarnation with a granted lease: read the epoch key and the member key, then one transaction
     * "member key as read (absent, or holding an earlier incarnation of this process) and epoch key unchanged" →
     * epoch + 1 and the leased record. A record of this very runtime and lease is an earlier attempt whose outcome
     * was unknown: it is ours. A record of another runtime means the node id is taken. A lost race reads again; at
     * most {@link MembershipConfiguration#MAX_REGISTRATION_ATTEMPTS} rounds.
     *
     * @throws Membership.NodeIdInUseException if another live runtime holds the node id.
     * @throws EtcdGateway.EtcdCallException if etcd did not answer (the caller retries).
     * @throws Membership.LostRacesException if every round lost a race (the caller retries).
     */
    Incarnation register(
        final int number,
        final UUID uuid,
        final long leaseId,
        final long ttlSecs,
        final RegistrationValidity validity)
    {
        final String nodeId = settings.nodeId();
        final String memberKey = MembershipConfiguration.memberKey(settings.clusterName(), nodeId);
        final String epochKey = MembershipConfiguration.epochKey(settings.clusterName(), nodeId);
        ownRuntimeUuids.add(uuid);

        for (int attempt = 0; attempt < MembershipConfiguration.MAX_REGISTRATION_ATTEMPTS; attempt++)
        {
            final GetResponse epochResponse = etcd.get(epochKey);
            long epochModRevision = 0;
            long previousEpoch = 0;
            if (!epochResponse.getKvs().isEmpty())
            {
                final KeyValue kv = epochResponse.getKvs().get(0);
                epochModRevision = kv.getModRevision();
                previousEpoch = Long.parseLong(kv.getValue().toString(StandardCharsets.UTF_8).trim());
            }

            long memberModRevision = 0;
            final GetResponse memberResponse = etcd.get(memberKey);
            if (!memberResponse.getKvs().isEmpty())
            {
                final KeyValue kv = memberResponse.getKvs().get(0);
                MemberRecord existing = null;
                try
                {
                    existing = MemberRecord.decode(memberKey, kv.getValue().getBytes());
                }
                catch (final MemberRecord.MalformedRecordException ignore)
                {
                    // reported below as an unknown holder
                }
                if (null != existing && existing.runtimeUuid().equals(uuid) && existing.leaseId() == leaseId &&
                    kv.getLease() == leaseId)
                {
                    // An earlier attempt whose outcome was unknown did commit: it is ours.
                    return new Incarnation(number, uuid, leaseId, ttlSecs, validity, existing, kv.getModRevision());
                }
                if (null == existing || !ownRuntimeUuids.contains(existing.runtimeUuid()))
                {
                    throw new Membership.NodeIdInUseException("node id '" + nodeId + "' is already registered in cluster '" +
                        settings.clusterName() + "' by " + (null == existing ? "an unreadable record" :
                        "runtime " + existing.runtimeUuid() + " (epoch " + existing.epoch() + ", started " +
                        Instant.ofEpochMilli(existing.startTimeMs()) + ", peer " + existing.peerEndpoint() + ")") +
                        "; stop that Manager or wait for its lease to expire (up to its TTL after it stopped), " +
                        "or choose another --node-id");
                }
                // A record of an earlier incarnation of this process (or of an earlier lease of this one) whose
                // lease etcd has not expired yet: dead by our own verdict, so it is replaced, exactly as read.
                memberModRevision = kv.getModRevision();
            }

            final MemberRecord record = new MemberRecord(
                nodeId,
                previousEpoch + 1,
                uuid,
                leaseId,
                settings.peerEndpoint(),
                settings.transferEndpoint(),
                MembershipConfiguration.PROTOCOL_VERSION,
                settings.startTimeMs());
            final Cmp memberAsRead = 0 == memberModRevision ?
                new Cmp(EtcdGateway.bytes(memberKey), Cmp.Op.EQUAL, CmpTarget.createRevision(0)) :
                new Cmp(EtcdGateway.bytes(memberKey), Cmp.Op.EQUAL, CmpTarget.modRevision(memberModRevision));
            final TxnResponse response = etcd.txn(
                new Cmp[]{
                    memberAsRead,
                    new Cmp(EtcdGateway.bytes(epochKey), Cmp.Op.EQUAL, CmpTarget.modRevision(epochModRevision))},
                new Op[]{
                    Op.put(EtcdGateway.bytes(epochKey), EtcdGateway.bytes(Long.toString(record.epoch())),
                        PutOption.DEFAULT),
                    Op.put(EtcdGateway.bytes(memberKey), EtcdGateway.bytes(record.encode()),
                        PutOption.builder().withLeaseId(leaseId).build())},
                new Op[0]);
            if (response.isSucceeded())
            {
                return new Incarnation(number, uuid, leaseId, ttlSecs, validity, record,
                    response.getHeader().getRevision());
            }
            // Lost a race for the epoch or the record: the next round reads again and decides.
        }
        throw new Membership.LostRacesException("registration of node id '" + nodeId + "' lost " +
            MembershipConfiguration.MAX_REGISTRATION_ATTEMPTS + " races in a row");
    }
}
