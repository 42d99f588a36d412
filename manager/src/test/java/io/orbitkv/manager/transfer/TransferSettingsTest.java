package io.orbitkv.manager.transfer;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.manager.ManagerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The source's settings from a Manager context: defaults, half the pool for a zero budget, and each range at its edge.
 */
class TransferSettingsTest
{
    private static final long POOL_BYTES = 8L << 20;

    @TempDir
    Path dir;

    private ManagerContext context()
    {
        return new ManagerContext().name("transfer-settings").dir(dir.toFile()).poolBytes(POOL_BYTES);
    }

    @Test
    void shouldDefaultToHalfThePoolAndTheDesignLimits()
    {
        final TransferSettings settings = TransferSettings.of(context().conclude());
        assertEquals(POOL_BYTES / 2, settings.budgetBytes());
        assertEquals(TransferLimits.MAX_SESSIONS, settings.maxSessions());
        assertEquals(TransferLimits.DEFAULT_MAX_SESSIONS_PER_PEER, settings.sessionsPerPeer());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(TransferLimits.DEFAULT_SESSION_TTL_MS), settings.sessionTtlNs());
        assertEquals((int)TransferLimits.DEFAULT_SESSION_TTL_MS, settings.sessionTtlMs());
    }

    @Test
    void shouldTakeEachSettingAtItsEdgeAndRefuseOnePast()
    {
        final TransferSettings settings = TransferSettings.of(context()
            .transferBudgetBytes(POOL_BYTES)
            .transferMaxSessions(TransferLimits.MAX_SESSIONS)
            .transferSessionsPerPeer(TransferLimits.MAX_SESSIONS)
            .transferSessionTtlNs(1_000_000L)
            .conclude());
        assertEquals(POOL_BYTES, settings.budgetBytes());
        assertEquals(TransferLimits.MAX_SESSIONS, settings.sessionsPerPeer());

        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> context().transferBudgetBytes(POOL_BYTES + 1).conclude()).getMessage().contains("--transfer-budget"));
        assertThrows(IllegalArgumentException.class, () -> context().transferBudgetBytes(-1).conclude());
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> context().transferMaxSessions(TransferLimits.MAX_SESSIONS + 1).conclude()).getMessage()
            .contains("--transfer-max-sessions"));
        assertThrows(IllegalArgumentException.class, () -> context().transferMaxSessions(0).conclude());
        assertEquals(8, TransferSettings.of(context().transferMaxSessions(8).conclude()).sessionsPerPeer(),
            "the per-peer default is capped by a smaller session limit");
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> context().transferSessionsPerPeer(TransferLimits.MAX_SESSIONS + 1).conclude()).getMessage()
            .contains("--transfer-sessions-per-peer"));
        assertThrows(IllegalArgumentException.class, () -> context().transferSessionsPerPeer(0).conclude());
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> context().transferSessionTtlNs(999_999L).conclude()).getMessage().contains("--transfer-session-ttl"));
    }
}
