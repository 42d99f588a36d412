package io.orbitkv.manager.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.status.SystemCounters;
import java.nio.charset.StandardCharsets;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;

/**
 * The membership lines of {@code orbitkv stat}, rendered from a counters section as a registered Manager fills it.
 */
class StatMembershipLineTest
{
    @Test
    void shouldNameTheShardsWithReducedFailureCoverageOnlyWhenThereAreSome()
    {
        final int valuesLength = 512 * CountersReader.COUNTER_LENGTH;
        final CountersManager countersManager = new CountersManager(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength * 4, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength, 64)),
            StandardCharsets.US_ASCII);
        try (SystemCounters counters = SystemCounterFamilies.allocate(countersManager))
        {
            counters.get(MembershipCounter.REGISTRATION_STATE).set(Membership.STATE_REGISTERED);
            counters.get(MembershipCounter.VIEW_COMPLETE).set(1);
            counters.get(MembershipCounter.MEMBERS).set(2);
            counters.get(MembershipCounter.REMOTE_WORK_ENABLED).set(1);
            counters.get(MembershipCounter.SHARDS_UNAVAILABLE).set(1);

            final StringBuilder full = new StringBuilder();
            StatCommand.renderMembership(countersManager, full);
            assertTrue(full.toString().endsWith(
                "member view complete, members 2, remote work enabled, shards unavailable 1 of 16\n"), full.toString());
            assertFalse(full.toString().contains("coverage"), full.toString());

            counters.get(MembershipCounter.SHARDS_DEGRADED).set(5);
            final StringBuilder degraded = new StringBuilder();
            StatCommand.renderMembership(countersManager, degraded);
            assertTrue(degraded.toString().endsWith("shards unavailable 1 of 16, reduced failure coverage on 5 of 16 " +
                "(fewer live copies than asked; orbitkv members lists them)\n"), degraded.toString());
            assertEquals(full.toString().lines().count(), degraded.toString().lines().count());
        }
    }
}
