package io.orbitkv.bench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What each request of one replay found, written from the host engines' answers (each request once) and read when the replay is
 * done; running totals feed the progress line.
 */
final class ReplayOutcomes
{
    final int[] host;
    final int[] dram;
    final int[] ssd;
    final int[] peer;
    final int[] chain;
    final int[] inputTokens;
    final long[] restoreNs;
    final long[] serviceNs;
    final boolean[] unserved;
    /** Request index in completion order. */
    final int[] completed;
    /** Completion time (ns since the replay began) in completion order. */
    final long[] completedAtNs;

    final AtomicInteger done = new AtomicInteger();
    final AtomicLong blocks = new AtomicLong();
    final AtomicLong hits = new AtomicLong();
    final AtomicLong wrongBytes = new AtomicLong();
    /** Requests recomputed without their Manager so far. */
    final AtomicInteger recomputed = new AtomicInteger();
    private volatile long startNs;

    ReplayOutcomes(final int requests)
    {
        host = new int[requests];
        dram = new int[requests];
        ssd = new int[requests];
        peer = new int[requests];
        chain = new int[requests];
        inputTokens = new int[requests];
        restoreNs = new long[requests];
        serviceNs = new long[requests];
        unserved = new boolean[requests];
        completed = new int[requests];
        completedAtNs = new long[requests];
        startNs = System.nanoTime();
    }

    /**
     * Mark the start of the replay: completion times count from here.
     *
     * @param replayStartNs {@link System#nanoTime()} when the first request is dispatched.
     */
    void begin(final long replayStartNs)
    {
        startNs = replayStartNs;
    }

    void record(
        final ReplayTrace.Request request,
        final int hostIndex,
        final int dramHits,
        final int ssdHits,
        final int peerHits,
        final long restore,
        final long service,
        final long wrong,
        final boolean notServed)
    {
        final int i = request.index();
        host[i] = hostIndex;
        dram[i] = dramHits;
        ssd[i] = ssdHits;
        peer[i] = peerHits;
        chain[i] = request.hashIds().length;
        inputTokens[i] = request.inputLength();
        restoreNs[i] = restore;
        serviceNs[i] = service;
        unserved[i] = notServed;
        blocks.addAndGet(chain[i]);
        hits.addAndGet(dramHits + ssdHits + peerHits);
        wrongBytes.addAndGet(wrong);
        if (notServed)
        {
            recomputed.incrementAndGet();
        }
        synchronized (this)
        {
            final int slot = done.get();
            completed[slot] = i;
            completedAtNs[slot] = System.nanoTime() - startNs;
            done.incrementAndGet();
        }
    }
}
