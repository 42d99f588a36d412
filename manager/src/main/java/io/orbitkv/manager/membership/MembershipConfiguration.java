package io.orbitkv.manager.membership;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Limits and defaults of leased membership (design: "Implemented membership behavior"). Every number here is the
 * design's; the ones a user may change are flags of {@code orbitkv manager} and settings of the ManagerContext.
 */
public final class MembershipConfiguration
{
    /** Default lease TTL (design: --membership-ttl-secs, default 10). */
    public static final int MEMBERSHIP_TTL_SECS_DEFAULT = 10;

    /**
     * Shortest accepted lease TTL. Measured on this stack (notes/etcd.md): with 2 s leases were lost across a
     * 4 s etcd restart and across leader elections; 10 s survived both. jetcd also drops a lease locally once a
     * whole TTL passes without a keepalive reply.
     */
    public static final int MIN_MEMBERSHIP_TTL_SECS = 10;

    /** Default deadline of every etcd call: an unreachable etcd must never hang a thread. */
    public static final long ETCD_DEADLINE_MS_DEFAULT = 2_000;

    /** Shortest etcd call deadline accepted. */
    public static final long MIN_ETCD_DEADLINE_MS = 100;

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

    /**
     * Default time a Manager keeps trying to join (placement check and first registration) before it gives up. The
     * first calls of a fresh JVM pay for class loading and connection set-up: measured here ~0.9 s unloaded and
     * 2.4-2.8 s with three JVMs starting on two busy cores, so one call deadline alone is not a fair verdict on
     * etcd's reachability.
     */
    public static final long JOIN_TIMEOUT_MS_DEFAULT = 60_000;

    /** Shortest accepted join timeout. */
    public static final long MIN_JOIN_TIMEOUT_MS = 100;

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

    /** Retry delay of a keepalive that failed at once (e.g. no connected member): sooner than the next regular one. */
    public static final long KEEPALIVE_RETRY_NS = TimeUnit.MILLISECONDS.toNanos(250);

    /**
     * Default peer endpoint: the catalog's Aeron UDP endpoint, bound on loopback with a port the OS picks (the bound
     * port is what the member record advertises). Set a routable HOST:PORT for Managers on several hosts.
     */
    public static final String PEER_ENDPOINT_DEFAULT = "127.0.0.1:0";

    /** Default transfer endpoint advertised in the member record (placeholder until the transfer transport exists). */
    public static final String TRANSFER_ENDPOINT_DEFAULT = "localhost:7471";

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

    static byte[] utf8(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
