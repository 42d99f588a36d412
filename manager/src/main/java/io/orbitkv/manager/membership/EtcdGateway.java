package io.orbitkv.manager.membership;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.WatchOption;
import io.orbitkv.manager.status.SystemCounters;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Every etcd call OrbitKV makes goes through here: each has a deadline (an unreachable etcd never hangs a caller)
 * and is counted by kind, so tests and operators can see that cache operations make none.
 *
 * <p>Thread safe: the membership threads and the shutdown hook share one instance.
 */
public final class EtcdGateway implements AutoCloseable
{
    private final Client client;
    private final boolean dedicatedLeaseClient;
    private volatile Client leaseClient;
    private final Client[] retiredLeaseClients = new Client[MembershipConfiguration.MAX_OUTSTANDING_KEEPALIVES + 1];
    private final int[] retiredGenerations = new int[retiredLeaseClients.length];
    private int leaseGeneration;
    private final String endpoints;
    private final EtcdSecurity security;
    private final long deadlineMs;
    private final AtomicCounter gets;
    private final AtomicCounter txns;
    private final AtomicCounter grants;
    private final AtomicCounter keepalives;
    private final AtomicCounter revokes;
    private final AtomicCounter watches;
    private final AtomicCounter failures;
    private final AtomicCounter timeouts;
    private final AtomicCounter leaseRenewals;

    /**
     * Connect (lazily: jetcd opens channels on the first call).
     *
     * @param endpoints  comma-separated etcd client URLs.
     * @param deadlineMs deadline of every call.
     * @param counters   where the call counters live.
     */
    public EtcdGateway(final String endpoints, final long deadlineMs, final SystemCounters counters)
    {
        this(endpoints, deadlineMs, counters, false);
    }

    /**
     * Connect, optionally with a second connection of its own for lease calls.
     *
     * @param endpoints            comma-separated etcd client URLs.
     * @param deadlineMs           deadline of every call.
     * @param counters             where the call counters live.
     * @param dedicatedLeaseClient whether grant, keepalive and revoke use their own jetcd client (its own HTTP/2
     *                             connection and event loop), so that snapshot pages and watch traffic on the main
     *                             one never queue in front of a keepalive or its reply.
     */
    public EtcdGateway(
        final String endpoints, final long deadlineMs, final SystemCounters counters, final boolean dedicatedLeaseClient)
    {
        this(endpoints, EtcdSecurity.NONE, deadlineMs, counters, dedicatedLeaseClient);
    }

    /**
     * Connect with TLS and/or auth.
     *
     * @param endpoints            comma-separated etcd client URLs.
     * @param security             TLS and auth settings ({@link EtcdSecurity#NONE} for plaintext without auth).
     * @param deadlineMs           deadline of every call.
     * @param counters             where the call counters live.
     * @param dedicatedLeaseClient see {@link #EtcdGateway(String, long, SystemCounters, boolean)}.
     */
    public EtcdGateway(
        final String endpoints,
        final EtcdSecurity security,
        final long deadlineMs,
        final SystemCounters counters,
        final boolean dedicatedLeaseClient)
    {
        this.endpoints = endpoints;
        this.security = security;
        this.client = newClient(endpoints, security, deadlineMs);
        this.dedicatedLeaseClient = dedicatedLeaseClient;
        this.leaseClient = dedicatedLeaseClient ? newClient(endpoints, security, deadlineMs) : client;
        this.deadlineMs = deadlineMs;
        this.gets = counters.get(MembershipCounter.ETCD_CALLS_GET);
        this.txns = counters.get(MembershipCounter.ETCD_CALLS_TXN);
        this.grants = counters.get(MembershipCounter.ETCD_CALLS_LEASE_GRANT);
        this.keepalives = counters.get(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE);
        this.revokes = counters.get(MembershipCounter.ETCD_CALLS_LEASE_REVOKE);
        this.watches = counters.get(MembershipCounter.ETCD_CALLS_WATCH);
        this.failures = counters.get(MembershipCounter.ETCD_CALL_FAILURES);
        this.timeouts = counters.get(MembershipCounter.ETCD_CALL_TIMEOUTS);
        this.leaseRenewals = counters.get(MembershipCounter.LEASE_CONNECTIONS_RENEWED);
    }

    /**
     * Move lease calls to a new lease client, i.e. new connections, when the current ones may be stuck: a keepalive
     * sent on a connection during a partition is retransmitted by TCP only after its backoff (up to seconds after the
     * heal), and everything sent after it waits behind it, while a new connection's first packets go out at once. The
     * previous client is retired, not closed: a keepalive in flight on it may still be answered (a slow etcd answers
     * late on the connection it was asked on); {@link #closeRetiredLeaseClients} closes retired clients once nothing
     * in flight uses them. Only with a dedicated lease client. Lease keeper thread.
     *
     * @return the new lease generation: calls made from now on belong to it.
     */
    int renewLeaseConnection()
    {
        if (!dedicatedLeaseClient)
        {
            return leaseGeneration;
        }
        final Client fresh = newClient(endpoints, security, deadlineMs);
        int slot = -1;
        for (int i = 0; i < retiredLeaseClients.length; i++)
        {
            if (null == retiredLeaseClients[i])
            {
                slot = i;
                break;
            }
            if (-1 == slot || retiredGenerations[i] < retiredGenerations[slot])
            {
                slot = i;
            }
        }
        if (null != retiredLeaseClients[slot])
        {
            // More retired clients than keepalives can be in flight: the oldest cannot be in use.
            retiredLeaseClients[slot].close();
        }
        retiredLeaseClients[slot] = leaseClient;
        retiredGenerations[slot] = leaseGeneration;
        leaseClient = fresh;
        leaseRenewals.increment();
        return ++leaseGeneration;
    }

    /**
     * Close the retired lease clients that no call in flight uses.
     *
     * @param inUse whether a call of that lease generation is still in flight.
     */
    void closeRetiredLeaseClients(final java.util.function.IntPredicate inUse)
    {
        for (int i = 0; i < retiredLeaseClients.length; i++)
        {
            if (null != retiredLeaseClients[i] && !inUse.test(retiredGenerations[i]))
            {
                retiredLeaseClients[i].close();
                retiredLeaseClients[i] = null;
            }
        }
    }

    /**
     * @return the lease generation calls made now belong to: how many times lease calls moved to a new client.
     */
    int leaseGeneration()
    {
        return leaseGeneration;
    }

    private static Client newClient(final String endpoints, final EtcdSecurity security, final long deadlineMs)
    {
        // round_robin sends each call to a connected member, so a killed member (e.g. the leader) is skipped at
        // once; gRPC's default pick_first stayed on the dead endpoint long enough to let a lease expire in a
        // leader-kill test. waitForReady(false) fails a call fast when no member is connected: the callers retry
        // under their own schedule instead of parking until the deadline.
        final io.etcd.jetcd.ClientBuilder builder = Client.builder()
            .endpoints(endpoints.split(","))
            .loadBalancerPolicy("round_robin")
            .waitForReady(false)
            .connectTimeout(Duration.ofMillis(deadlineMs));
        security.apply(builder);
        return builder.build();
    }

    /**
     * Explain a failed call in operator's words when TLS or auth is why (see {@link EtcdSecurity#explain}).
     *
     * @param failure the failure.
     * @param prefix  the key prefix the caller needs.
     * @return the explanation, or null when TLS and auth are not the cause.
     */
    public String explainAccess(final Throwable failure, final String prefix)
    {
        return security.explain(failure, endpoints, prefix);
    }

    /**
     * Describe a failed call: its TLS/auth explanation when it has one, else its message.
     *
     * @param failure the failure.
     * @param prefix  the key prefix the caller needs.
     * @return one line.
     */
    public String describe(final Throwable failure, final String prefix)
    {
        final String access = explainAccess(failure, prefix);
        return null != access ? access : String.valueOf(failure.getMessage());
    }

    static ByteSequence bytes(final String s)
    {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static ByteSequence bytes(final byte[] b)
    {
        return ByteSequence.from(b);
    }

    public long deadlineMs()
    {
        return deadlineMs;
    }

    /**
     * Read one key (linearizable).
     *
     * @param key the key.
     * @return the response.
     */
    public GetResponse get(final String key)
    {
        gets.increment();
        return await(client.getKVClient().get(bytes(key)));
    }

    /**
     * Read one page of a key range at a fixed revision, in key order. No sort option: on etcd 3.4/3.5 a sorted
     * range ignores the limit server-side and reads the whole range (notes/etcd.md).
     *
     * @param fromKey   first key (inclusive).
     * @param endKey    end of the range (exclusive).
     * @param revision  revision to read at, 0 for the current one.
     * @param limit     most keys.
     * @return the response.
     */
    public GetResponse page(final ByteSequence fromKey, final ByteSequence endKey, final long revision, final int limit)
    {
        gets.increment();
        return await(client.getKVClient().get(fromKey, GetOption.builder()
            .withRange(endKey)
            .withRevision(revision)
            .withLimit(limit)
            .build()));
    }

    /**
     * One transaction.
     *
     * @param conditions all must hold.
     * @param then       applied when they do.
     * @param otherwise  applied when they do not.
     * @return the response.
     */
    public TxnResponse txn(final Cmp[] conditions, final Op[] then, final Op[] otherwise)
    {
        txns.increment();
        return await(client.getKVClient().txn().If(conditions).Then(then).Else(otherwise).commit());
    }

    /**
     * Grant a lease.
     *
     * @param ttlSecs requested TTL.
     * @return {id, granted TTL seconds}.
     */
    long[] grant(final long ttlSecs)
    {
        grants.increment();
        final var response = await(leaseClient.getLeaseClient().grant(ttlSecs));
        return new long[]{response.getID(), response.getTTL()};
    }

    /**
     * One keepalive round trip.
     *
     * @param leaseId the lease.
     * @return the response; TTL &lt;= 0 means etcd no longer knows the lease.
     */
    public LeaseKeepAliveResponse keepAliveOnce(final long leaseId)
    {
        keepalives.increment();
        return await(leaseClient.getLeaseClient().keepAliveOnce(leaseId));
    }

    /**
     * One keepalive round trip without waiting: the caller bounds it (a keepalive is useful exactly until the
     * validity its send time would grant, which is not the general call deadline). Counted as a call; a failure
     * is counted by {@link #countFailure(Throwable)}.
     *
     * @param leaseId the lease.
     * @return the pending reply.
     */
    public CompletableFuture<LeaseKeepAliveResponse> keepAliveAsync(final long leaseId)
    {
        keepalives.increment();
        return leaseClient.getLeaseClient().keepAliveOnce(leaseId);
    }

    /**
     * Count a failed asynchronous call.
     *
     * @param error why, or null for a call the caller gave up on (its own deadline).
     * @return the exception describing it.
     */
    EtcdCallException countFailure(final Throwable error)
    {
        failures.increment();
        if (null == error)
        {
            timeouts.increment();
            return new EtcdCallException("etcd call exceeded its deadline", null, true);
        }
        final Throwable cause = error instanceof ExecutionException || error instanceof java.util.concurrent.CompletionException ?
            (null == error.getCause() ? error : error.getCause()) : error;
        return new EtcdCallException("etcd call failed: " + cause, cause, false);
    }

    /**
     * Revoke a lease (deletes its keys).
     *
     * @param leaseId the lease.
     */
    public void revoke(final long leaseId)
    {
        revokes.increment();
        await(leaseClient.getLeaseClient().revoke(leaseId));
    }

    /**
     * Remaining TTL of a lease, for {@code orbitkv members}.
     *
     * @param leaseId the lease.
     * @return the response.
     */
    public LeaseTimeToLiveResponse timeToLive(final long leaseId)
    {
        gets.increment();
        return await(client.getLeaseClient().timeToLive(leaseId, LeaseOption.DEFAULT));
    }

    /**
     * Compact history (tests and operators only).
     *
     * @param revision compact everything below this.
     */
    public void compact(final long revision)
    {
        txns.increment();
        await(client.getKVClient().compact(revision));
    }

    /**
     * Watch a prefix from a revision with previous values. Opening does not block; events arrive on jetcd threads.
     *
     * @param prefix   key prefix.
     * @param revision first revision to deliver.
     * @param listener callbacks.
     * @return the watcher, to close.
     */
    Watch.Watcher watch(final String prefix, final long revision, final Watch.Listener listener)
    {
        watches.increment();
        return client.getWatchClient().watch(
            bytes(prefix),
            WatchOption.builder().isPrefix(true).withRevision(revision).withPrevKV(true).build(),
            listener);
    }

    private <T> T await(final CompletableFuture<T> future)
    {
        try
        {
            return future.get(deadlineMs, TimeUnit.MILLISECONDS);
        }
        catch (final TimeoutException ex)
        {
            future.cancel(true);
            timeouts.increment();
            failures.increment();
            throw new EtcdCallException("etcd call exceeded its deadline of " + deadlineMs + " ms", ex, true);
        }
        catch (final ExecutionException ex)
        {
            failures.increment();
            final Throwable cause = null == ex.getCause() ? ex : ex.getCause();
            throw new EtcdCallException("etcd call failed: " + cause, cause, false);
        }
        catch (final InterruptedException ex)
        {
            future.cancel(true);
            failures.increment();
            Thread.currentThread().interrupt();
            throw new EtcdCallException("interrupted while waiting for etcd", ex, true);
        }
    }

    public void close()
    {
        if (leaseClient != client)
        {
            leaseClient.close();
        }
        for (final Client retired : retiredLeaseClients)
        {
            if (null != retired)
            {
                retired.close();
            }
        }
        client.close();
    }

    /**
     * A failed or timed-out etcd call. For a write, {@link #outcomeUnknown()} says whether it may have committed.
     */
    public static final class EtcdCallException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;
        private final boolean outcomeUnknown;

        EtcdCallException(final String message, final Throwable cause, final boolean outcomeUnknown)
        {
            super(message, cause);
            this.outcomeUnknown = outcomeUnknown;
        }

        public boolean outcomeUnknown()
        {
            return outcomeUnknown;
        }

        /**
         * Whether etcd answered that the lease does not exist.
         *
         * @return true if the cause says so.
         */
        public boolean isLeaseNotFound()
        {
            for (Throwable t = getCause(); null != t; t = t.getCause())
            {
                if (t instanceof io.etcd.jetcd.lease.NoSuchLeaseException ||
                    (null != t.getMessage() && t.getMessage().contains("lease not found")))
                {
                    return true;
                }
            }
            return false;
        }
    }
}
