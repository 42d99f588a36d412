package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The catalog's handles on its counters, which are system counters (ids 90-121 and 143 of
 * {@link SystemCounterDescriptor}, registered with the rest by {@link SystemCounters}), shown by {@code orbitkv stat}
 * and /metrics. Not a registry of its own: a catalog counter is declared by its descriptor; a field here only saves
 * the look-up on the agent's path.
 */
final class CatalogMetrics
{
    final AtomicCounter inventoryAdds;
    final AtomicCounter inventoryRemoves;
    final AtomicCounter inventoryFull;
    final AtomicCounter journalBytes;
    final AtomicCounter journalOverflows;
    final AtomicCounter recordsSent;
    final AtomicCounter snapshotsStarted;
    final AtomicCounter snapshotsCompleted;
    final AtomicCounter snapshotsFailed;
    final AtomicCounter streamRewinds;
    final AtomicCounter updateLagUs;
    final AtomicCounter updateLagMaxUs;
    final AtomicCounter hostedShards;
    final AtomicCounter incompleteShards;
    final AtomicCounter indexBytes;
    final AtomicCounter recordsApplied;
    final AtomicCounter hostResyncs;
    final AtomicCounter candidateHits;
    final AtomicCounter candidateBytes;
    final AtomicCounter coldQueries;
    final AtomicCounter coldKeys;
    final AtomicCounter localHostKeys;
    final AtomicCounter coldCoalesced;
    final AtomicCounter coldTimeouts;
    final AtomicCounter discoverySkipped;
    final AtomicCounter peerKeys;
    final AtomicCounter coldQueriesServed;
    final AtomicCounter coldRowsServed;
    final AtomicCounter coldRowsIncomplete;
    final AtomicCounter coldClaimsCorrected;
    final AtomicCounter coldQueriesRefused;
    final AtomicCounter coldQueriesMalformed;

    CatalogMetrics(final SystemCounters counters)
    {
        inventoryAdds = counters.get(SystemCounterDescriptor.CATALOG_INVENTORY_ADDS);
        inventoryRemoves = counters.get(SystemCounterDescriptor.CATALOG_INVENTORY_REMOVES);
        inventoryFull = counters.get(SystemCounterDescriptor.CATALOG_INVENTORY_FULL);
        journalBytes = counters.get(SystemCounterDescriptor.CATALOG_JOURNAL_BYTES);
        journalOverflows = counters.get(SystemCounterDescriptor.CATALOG_JOURNAL_OVERFLOWS);
        recordsSent = counters.get(SystemCounterDescriptor.CATALOG_RECORDS_SENT);
        snapshotsStarted = counters.get(SystemCounterDescriptor.CATALOG_SNAPSHOTS_STARTED);
        snapshotsCompleted = counters.get(SystemCounterDescriptor.CATALOG_SNAPSHOTS_COMPLETED);
        snapshotsFailed = counters.get(SystemCounterDescriptor.CATALOG_SNAPSHOTS_FAILED);
        streamRewinds = counters.get(SystemCounterDescriptor.CATALOG_STREAM_REWINDS);
        updateLagUs = counters.get(SystemCounterDescriptor.CATALOG_UPDATE_LAG_US);
        updateLagMaxUs = counters.get(SystemCounterDescriptor.CATALOG_UPDATE_LAG_MAX_US);
        hostedShards = counters.get(SystemCounterDescriptor.CATALOG_HOSTED_SHARDS);
        incompleteShards = counters.get(SystemCounterDescriptor.CATALOG_INCOMPLETE_SHARDS);
        indexBytes = counters.get(SystemCounterDescriptor.CATALOG_INDEX_BYTES);
        recordsApplied = counters.get(SystemCounterDescriptor.CATALOG_RECORDS_APPLIED);
        hostResyncs = counters.get(SystemCounterDescriptor.CATALOG_HOST_RESYNCS);
        candidateHits = counters.get(SystemCounterDescriptor.CATALOG_CANDIDATE_HITS);
        candidateBytes = counters.get(SystemCounterDescriptor.CATALOG_CANDIDATE_BYTES);
        coldQueries = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES);
        coldKeys = counters.get(SystemCounterDescriptor.CATALOG_COLD_KEYS);
        localHostKeys = counters.get(SystemCounterDescriptor.CATALOG_LOCAL_HOST_KEYS);
        coldCoalesced = counters.get(SystemCounterDescriptor.CATALOG_COLD_COALESCED);
        coldTimeouts = counters.get(SystemCounterDescriptor.CATALOG_COLD_TIMEOUTS);
        discoverySkipped = counters.get(SystemCounterDescriptor.CATALOG_DISCOVERY_SKIPPED);
        peerKeys = counters.get(SystemCounterDescriptor.CATALOG_PEER_KEYS);
        coldQueriesServed = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES_SERVED);
        coldRowsServed = counters.get(SystemCounterDescriptor.CATALOG_COLD_ROWS_SERVED);
        coldRowsIncomplete = counters.get(SystemCounterDescriptor.CATALOG_COLD_ROWS_INCOMPLETE);
        coldClaimsCorrected = counters.get(SystemCounterDescriptor.CATALOG_COLD_CLAIMS_CORRECTED);
        coldQueriesRefused = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES_REFUSED);
        coldQueriesMalformed = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES_MALFORMED);
    }

    /**
     * Publish the catalog-host side of cold queries: the handler keeps plain totals on the agent thread, copied here
     * on the housekeeping tick.
     */
    void onColdQueriesServed(final ColdQueryHandler handler)
    {
        coldQueriesServed.setRelease(handler.queriesServed());
        coldRowsServed.setRelease(handler.rowsServed());
        coldRowsIncomplete.setRelease(handler.incompleteRows());
        coldClaimsCorrected.setRelease(handler.claimsCorrected());
        coldQueriesRefused.setRelease(handler.rejected());
        coldQueriesMalformed.setRelease(
            handler.malformedFrames() + handler.schemaMismatches() + handler.unknownTemplates());
    }

    void onLag(final long lagNs)
    {
        final long us = lagNs / 1000;
        updateLagUs.setRelease(us);
        if (us > updateLagMaxUs.getPlain())
        {
            updateLagMaxUs.setRelease(us);
        }
    }
}
