package io.orbitkv.codecs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.engine.KeyStatus;
import org.junit.jupiter.api.Test;

class CandidateTableTest
{
    private final CandidateTable answer = CandidateTable.forAnswer();

    @Test
    void shouldRefuseTheFifthCandidateOfAKey()
    {
        final int owner = answer.addOwner(1, 2, "node-a");
        for (int i = 0; i < EngineRingLimits.MAX_CANDIDATES_PER_KEY; i++)
        {
            assertTrue(answer.addCandidate(7, owner, KeyStatus.DRAM, i, 4096));
        }
        assertFalse(answer.addCandidate(7, owner, KeyStatus.SSD, 99, 4096));
        assertEquals(EngineRingLimits.MAX_CANDIDATES_PER_KEY, answer.candidateCount());
        assertTrue(answer.addCandidate(8, owner, KeyStatus.SSD, 99, 4096), "the next key starts afresh");
        assertEquals(2, answer.peerKeyCount());
    }

    @Test
    void shouldRefuseTheThirtyThirdOwnerButStillFindKnownOnes()
    {
        for (int i = 0; i < EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP; i++)
        {
            assertEquals(i, answer.addOwner(i, -i, "node-" + i));
        }
        assertEquals(CandidateTable.NO_OWNER, answer.addOwner(1000, 1000, "node-late"));
        assertEquals(5, answer.addOwner(5, -5, "node-5"), "a known owner is found even when full");
        assertEquals(EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP, answer.ownerCount());
    }

    @Test
    void shouldDedupeOwnersByRuntimeUuidKeepingTheFirstNodeId()
    {
        final int first = answer.addOwner(11, 22, "node-a");
        assertEquals(1, answer.addOwner(11, 23, "node-b"), "another UUID is another owner");
        assertEquals(first, answer.addOwner(11, 22, "node-renamed"));
        assertEquals(2, answer.ownerCount());
        assertEquals("node-a", answer.ownerNodeId(first));
        assertEquals(11, answer.ownerRuntimeUuidMsb(first));
        assertEquals(22, answer.ownerRuntimeUuidLsb(first));
    }

    @Test
    void shouldRefuseOutOfOrderOrOutOfBoundsKeysUnknownOwnersAndLocalTiers()
    {
        final int owner = answer.addOwner(1, 1, "node-a");
        assertTrue(answer.addCandidate(10, owner, KeyStatus.DRAM, 1, 1));
        assertFalse(answer.addCandidate(9, owner, KeyStatus.DRAM, 1, 1), "key order");
        assertFalse(answer.addCandidate(-1, owner, KeyStatus.DRAM, 1, 1));
        assertFalse(answer.addCandidate(EngineRingLimits.MAX_KEYS_PER_REQUEST, owner, KeyStatus.DRAM, 1, 1));
        assertFalse(answer.addCandidate(11, owner + 1, KeyStatus.DRAM, 1, 1), "owner not added");
        assertFalse(answer.addCandidate(11, owner, KeyStatus.MISS, 1, 1), "a candidate is DRAM or SSD");
        assertFalse(answer.addCandidate(11, owner, KeyStatus.PEER, 1, 1));
        assertTrue(answer.addCandidate(10, owner, KeyStatus.SSD, 2, 1), "the same key again is in order");
        assertEquals(2, answer.candidateCount());
        assertEquals(KeyStatus.SSD, answer.candidateTier(1));
    }

    @Test
    void shouldRefuseKeysPastThePeerKeyLimit()
    {
        final int owner = answer.addOwner(1, 1, "node-a");
        for (int k = 0; k < EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP; k++)
        {
            assertTrue(answer.addCandidate(k, owner, KeyStatus.DRAM, k, 1));
        }
        assertFalse(answer.addCandidate(EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP, owner, KeyStatus.DRAM, 0, 1));
        assertTrue(answer.addCandidate(EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP - 1, owner, KeyStatus.SSD, 0, 1),
            "more candidates for the last key are fine");
    }

    @Test
    void shouldRefuseCandidatesPastTheAnswersCandidateLimit()
    {
        final int owner = answer.addOwner(1, 1, "node-a");
        final int full = EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP;
        for (int c = 0; c < full; c++)
        {
            assertTrue(answer.addCandidate(c / EngineRingLimits.MAX_CANDIDATES_PER_KEY, owner, KeyStatus.DRAM, c, 1));
        }
        assertEquals(full, answer.candidateCount());
        assertFalse(answer.addCandidate(full / EngineRingLimits.MAX_CANDIDATES_PER_KEY, owner, KeyStatus.DRAM, 0, 1),
            "a new key past the candidate limit");
        assertEquals(full, answer.candidateCount());
    }

    @Test
    void shouldForgetEverythingOnReset()
    {
        final int owner = answer.addOwner(1, 1, "node-a");
        answer.addCandidate(100, owner, KeyStatus.DRAM, 1, 1);
        answer.reset();
        assertTrue(answer.isEmpty());
        assertEquals(0, answer.ownerCount());
        assertEquals(0, answer.peerKeyCount());
        assertEquals(0, answer.addOwner(2, 2, "node-b"));
        assertTrue(answer.addCandidate(0, 0, KeyStatus.DRAM, 1, 1), "key order restarts");
        assertThrows(IndexOutOfBoundsException.class, () -> answer.candidateKeyIndex(1));
    }

    @Test
    void shouldRejectBadNodeIds()
    {
        assertThrows(IllegalArgumentException.class, () -> answer.addOwner(1, 1, ""));
        assertThrows(IllegalArgumentException.class, () -> answer.addOwner(1, 1, null));
        assertThrows(IllegalArgumentException.class, () -> answer.addOwner(1, 1, "x".repeat(EngineRingLimits.MAX_NODE_ID_LENGTH + 1)));
        assertThrows(IllegalArgumentException.class, () -> answer.addOwner(1, 1, "n\u00e9"));
        assertEquals(0, answer.ownerCount());
        assertEquals(0, answer.addOwner(1, 1, "x".repeat(EngineRingLimits.MAX_NODE_ID_LENGTH)));
    }
}
