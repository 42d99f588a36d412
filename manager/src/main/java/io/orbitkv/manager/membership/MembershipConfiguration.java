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

    /** Retry delay of a keepalive that failed at once (e.g. no connected member): sooner than the next regular one. */
    public static final long KEEPALIVE_RETRY_NS = TimeUnit.MILLISECONDS.toNanos(250);

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
}
