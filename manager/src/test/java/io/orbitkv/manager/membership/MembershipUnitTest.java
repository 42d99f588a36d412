package io.orbitkv.manager.membership;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Registration validity and member record rules, without etcd.
 */
class MembershipUnitTest
{
    private static final long SEC = TimeUnit.SECONDS.toNanos(1);

    @Test
    void shouldBeValidUntilHalfTheAcknowledgedTtlMeasuredFromTheSend()
    {
        final long t0 = 1_000 * SEC;
        final RegistrationValidity validity = new RegistrationValidity(t0, 10);
        assertTrue(validity.isValid(t0 + 5 * SEC - 1));
        assertFalse(validity.isValid(t0 + 5 * SEC), "half of a 10 s TTL from the grant's send time");

        // a keepalive sent at t0+3 s and acknowledged 1.9 s later extends from the send, not from the reply
        assertTrue(validity.onAcknowledged(t0 + 3 * SEC, 10, t0 + 4_900_000_000L));
        assertEquals(t0 + 8 * SEC, validity.validUntilNs());
        assertTrue(validity.isValid(t0 + 8 * SEC - 1));
        assertFalse(validity.isExpired(t0 + 8 * SEC - 1));
    }

    @Test
    void shouldNotBeRevivedByALateAcknowledgement()
    {
        final long t0 = 0;
        final RegistrationValidity validity = new RegistrationValidity(t0, 10);
        // the keepalive was sent in time but its reply arrives after validity ran out
        assertFalse(validity.onAcknowledged(t0 + 4 * SEC, 10, t0 + 5 * SEC));
        assertTrue(validity.isExpired(t0 + 5 * SEC));
        assertFalse(validity.isValid(t0 + 5 * SEC));
        assertFalse(validity.onAcknowledged(t0 + 6 * SEC, 10, t0 + 6 * SEC + 1), "expired stays expired");
        assertFalse(validity.isValid(t0 + 6 * SEC + 2));
    }

    @Test
    void shouldRoundTripAMemberRecordAndRejectBadOnes()
    {
        final MemberRecord record = new MemberRecord("node-1", 7, UUID.randomUUID(), 0x1234L, "h:1", "h:2",
            MembershipConfiguration.PROTOCOL_VERSION, 1_700_000_000_000L);
        final String key = MembershipConfiguration.memberKey("c1", "node-1");
        assertEquals(record, MemberRecord.decode(key, record.encode()));

        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(MembershipConfiguration.memberKey("c1", "other"), record.encode()),
            "the key names another node");
        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(key, "{}".getBytes(StandardCharsets.UTF_8)));
        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(key, "[1,2]".getBytes(StandardCharsets.UTF_8)));
        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(key, new String(record.encode(), StandardCharsets.UTF_8)
                .replace("\"epoch\":7", "\"epoch\":0").getBytes(StandardCharsets.UTF_8)));
        assertThrows(MemberRecord.RecordTooLargeException.class,
            () -> MemberRecord.decode(key, new byte[MembershipConfiguration.MAX_RECORD_BYTES + 1]));
        assertEquals(1024, MembershipTestSupport.fakeRecord("x", 1024).length);
        MemberRecord.decode(MembershipConfiguration.memberKey("c1", "x"), MembershipTestSupport.fakeRecord("x", 1024));
    }
}
