package io.orbitkv.manager.membership;

import java.util.concurrent.TimeUnit;

/**
 * Protocol limits and etcd key layout of leased membership (design: "Implemented membership behavior"). Nothing here
 * is a setting: every membership value a user may change (lease TTL, etcd deadline, join timeout, endpoints) is a
 * property with a default in {@code io.orbitkv.manager.Configuration}, like every other Manager setting.
 * <p>
 * These stay in a type of their own, in the membership package, because they are the membership protocol's, not the
 * Manager's: the numbers are fixed by the design (a flag for them would let Managers of one cluster disagree on the
 * wire), and the key helpers are shared by everything that reads the cluster's etcd keys, {@code orbitkv members}
 * included, which runs no Manager.
 */
public final class MembershipConfiguration
{
    /** Records per snapshot page (design: pages of 128 records at one revision). */
    public static final int SNAPSHOT_PAGE_SIZE = 128;

    /** Most members a view holds (design: limit 4,096 members). */
    public static final int MAX_MEMBERS = 4_096;

    /** Largest member record JSON in bytes (design: at most 1 KiB of JSON per member). */
    public static final int MAX_RECORD_BYTES = 1_024;

    /** Wire protocol version written into member records. */
    public static final int PROTOCOL_VERSION = 1;

    /** Capacity of the queue between the jetcd watch callback and the view keeper; overflow invalidates the view. */
    public static final int WATCH_QUEUE_CAPACITY = 1_024;

    /** Registration rounds (each a few calls under the deadline) within one attempt to register. */
    public static final int MAX_REGISTRATION_ATTEMPTS = 5;

    /** First pause after a failed join or re-registration round; doubles up to {@link #REGISTER_RETRY_MAX_NS}. */
    public static final long REGISTER_RETRY_MIN_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Longest pause between join or re-registration rounds. */
    public static final long REGISTER_RETRY_MAX_NS = TimeUnit.SECONDS.toNanos(2);

    /**
     * Keepalives sent per acknowledged TTL. Local validity lasts half the TTL from a keepalive's send, so with six
     * per TTL three keepalives are sent inside every validity window and the registration survives two lost or
     * slow ones. With three per TTL (etcd's own clients' pace) the slack after the one keepalive due in each window
     * was TTL/6 (1.7 s at 10 s), less than the 2 s call deadline: a single slow round trip expired the runtime.
     */
    public static final int KEEPALIVES_PER_TTL = 6;

    /**
     * Keepalives in flight at once. Each is given up once the validity its send would grant has passed (half the
     * TTL), so at six per TTL at most three or four are ever outstanding.
     */
    public static final int MAX_OUTSTANDING_KEEPALIVES = 4;

    /** First retry delay of a failed snapshot; doubles up to {@link #SNAPSHOT_RETRY_MAX_NS}. */
    public static final long SNAPSHOT_RETRY_MIN_NS = TimeUnit.MILLISECONDS.toNanos(50);

    /** Longest retry delay of a failed snapshot. */
    public static final long SNAPSHOT_RETRY_MAX_NS = TimeUnit.SECONDS.toNanos(1);

    /**
     * A keepalive unanswered this long, with no other acknowledged since it was sent, is overdue: its connection may be
     * stuck (after a partition heals, TCP retransmits what was sent during it only after its backoff, seconds later),
     * so the lease client is renewed (fresh connections) and a keepalive sent on it at once.
     */
    public static final long KEEPALIVE_OVERDUE_NS = TimeUnit.SECONDS.toNanos(1);

    /**
     * Least time between two renewals of the lease client while keepalives stay overdue: a fresh connection is tried
     * this often, so one made after a partition healed answers within this of the heal (plus a round trip). Each
     * renewal keeps the previous client open for one more interval, so a connection gets two intervals to answer.
     */
    public static final long LEASE_RENEW_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(250);

    /** Retry delay of a keepalive that failed at once (e.g. no connected member): sooner than the next regular one. */
    public static final long KEEPALIVE_RETRY_NS = TimeUnit.MILLISECONDS.toNanos(250);

    /** Shard moves in flight at once by default ({@code --max-shard-moves}). */
    public static final int MAX_SHARD_MOVES_DEFAULT = 2;

    /** Fewest shard moves in flight a reconciler may be limited to. */
    public static final int MIN_SHARD_MOVES = 1;

    /** Most shard moves in flight: every shard at once. */
    public static final int MAX_SHARD_MOVES = 16;

    /**
     * How long the reconciler leaves a move SWITCHED before retiring the old copies: time for every Manager's view to
     * see the switch (a watch event's trip) and send its queries to the new copies first.
     */
    public static final long SWITCH_DWELL_MS = 1_000;

    /** First retry delay of a reconciler or coverage write that etcd failed; doubles up to the next. */
    public static final long PLACEMENT_RETRY_MIN_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Longest retry delay of the placement agent. */
    public static final long PLACEMENT_RETRY_MAX_NS = TimeUnit.SECONDS.toNanos(2);

    /** Root of every OrbitKV key (design: /orbitkv/v1/&lt;cluster&gt;/...). */
    public static final String KEY_ROOT = "/orbitkv/v1/";

    private MembershipConfiguration()
    {
    }

    /**
     * Prefix of every key of a cluster.
     *
     * @param clusterName the cluster.
     * @return {@code /orbitkv/v1/<cluster>/}.
     */
    public static String clusterPrefix(final String clusterName)
    {
        return KEY_ROOT + clusterName + "/";
    }

    /**
     * Prefix of the leased member records.
     *
     * @param clusterName the cluster.
     * @return {@code /orbitkv/v1/<cluster>/members/}.
     */
    public static String membersPrefix(final String clusterName)
    {
        return clusterPrefix(clusterName) + "members/";
    }

    /**
     * Key of a member record.
     *
     * @param clusterName the cluster.
     * @param nodeId      the node.
     * @return the key.
     */
    public static String memberKey(final String clusterName, final String nodeId)
    {
        return membersPrefix(clusterName) + nodeId;
    }

    /**
     * Key of a node's persistent epoch counter (not leased: survives restarts, so incarnations only grow).
     *
     * @param clusterName the cluster.
     * @param nodeId      the node.
     * @return the key.
     */
    public static String epochKey(final String clusterName, final String nodeId)
    {
        return clusterPrefix(clusterName) + "epochs/" + nodeId;
    }

    /**
     * Key of the placement configuration (design: /orbitkv/v1/&lt;cluster&gt;/placement).
     *
     * @param clusterName the cluster.
     * @return the key.
     */
    public static String placementKey(final String clusterName)
    {
        return clusterPrefix(clusterName) + "placement";
    }

    /**
     * Key of the desired placement, written by {@code orbitkv placement set} in the placement record format with the
     * generation it asks for; the reconciler moves the installed placement there.
     *
     * @param clusterName the cluster.
     * @return {@code /orbitkv/v1/<cluster>/placement-desired}.
     */
    public static String placementDesiredKey(final String clusterName)
    {
        return clusterPrefix(clusterName) + "placement-desired";
    }

    /**
     * Key of the running placement transition (JSON of a {@link PlacementTransition}); absent when none runs.
     *
     * @param clusterName the cluster.
     * @return {@code /orbitkv/v1/<cluster>/placement-transition}.
     */
    public static String placementTransitionKey(final String clusterName)
    {
        return clusterPrefix(clusterName) + "placement-transition";
    }

    /**
     * Election key of the placement reconciler, put under the elected Manager's lease (node id and runtime UUID).
     *
     * @param clusterName the cluster.
     * @return {@code /orbitkv/v1/<cluster>/reconciler}.
     */
    public static String reconcilerKey(final String clusterName)
    {
        return clusterPrefix(clusterName) + "reconciler";
    }

    /**
     * Prefix of the coverage reports, one per Manager under its own lease.
     *
     * @param clusterName the cluster.
     * @return {@code /orbitkv/v1/<cluster>/coverage/}.
     */
    public static String coveragePrefix(final String clusterName)
    {
        return clusterPrefix(clusterName) + "coverage/";
    }

    /**
     * Key of a Manager's latest coverage report.
     *
     * @param clusterName the cluster.
     * @param nodeId      the node.
     * @return {@code /orbitkv/v1/<cluster>/coverage/<node>}.
     */
    public static String coverageKey(final String clusterName, final String nodeId)
    {
        return coveragePrefix(clusterName) + nodeId;
    }

    /**
     * Validate a cluster name: 1-64 characters of {@code [A-Za-z0-9._-]} (it is an etcd key segment).
     *
     * @param clusterName the name.
     */
    public static void checkClusterName(final String clusterName)
    {
        if (null == clusterName || !clusterName.matches("[A-Za-z0-9._-]{1,64}"))
        {
            throw new IllegalArgumentException(
                "--cluster-name must be 1-64 characters of [A-Za-z0-9._-]: '" + clusterName + "'");
        }
    }
}
