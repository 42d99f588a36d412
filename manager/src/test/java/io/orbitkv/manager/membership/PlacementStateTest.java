package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which nodes hold a shard and in which order they are asked, through every phase of a move from {a,b,c} to
 * {a,b,c,d} with three copies; and the route fingerprints each state accepts.
 */
class PlacementStateTest
{
    private static final ShardPlacement ABC = ShardPlacement.parse("a,b,c", 3);
    private static final ShardPlacement ABCD = ShardPlacement.parse("a,b,c,d", 3);

    @Test
    void shouldPlanAMoveOnlyForTheShardsWhoseCopiesChange()
    {
        final PlacementTransition plan = PlacementTransition.plan(1, ABC, 2, ABCD);
        int moving = 0;
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            final boolean dHolds = ABCD.replicaIndex(s, "d") >= 0;
            assertEquals(dHolds, null != plan.move(s), "shard " + s);
            moving += dHolds ? 1 : 0;
        }
        assertTrue(moving > 0 && moving < StateKeyShard.SHARD_COUNT, "d takes some shards, not all: " + moving);
        assertEquals(0, plan.inFlight());
        assertFalse(plan.isDone());
        assertTrue(PlacementTransition.plan(1, ABC, 2, ShardPlacement.parse("c,b,a", 3)).isDone());
    }

    @Test
    void shouldHoldAndAskTheCopiesEachPhaseNames()
    {
        final int shard = firstShardDTakes();
        final List<String> oldCopies = copies(ABC, shard);
        final List<String> newCopies = copies(ABCD, shard);
        final String dropped = oldCopies.stream().filter((n) -> !newCopies.contains(n)).findFirst().orElseThrow();
        PlacementTransition transition = PlacementTransition.plan(1, ABC, 2, ABCD);

        PlacementState state = new PlacementState(1, ABC, transition);
        assertEquals(oldCopies, List.of(state.holders(shard)));
        assertEquals(oldCopies, List.of(state.queryOrder(shard)));

        for (final MovePhase phase : List.of(MovePhase.PREPARE, MovePhase.CAUGHT_UP))
        {
            transition = transition.with(transition.move(shard).advance(phase, Map.of()));
            state = new PlacementState(1, ABC, transition);
            assertEquals(Set.of("a", "b", "c", "d"), new HashSet<>(Arrays.asList(state.holders(shard))), phase.name());
            assertEquals(oldCopies, List.of(state.queryOrder(shard)), "an incomplete new copy is not asked: " + phase);
            assertTrue(state.holds(shard, "d"));
        }

        transition = transition.with(transition.move(shard).advance(MovePhase.SWITCHED, Map.of("a", 7L)));
        state = new PlacementState(1, ABC, transition);
        assertEquals(4, state.holders(shard).length);
        final String[] switched = state.queryOrder(shard);
        assertEquals(newCopies, List.of(switched).subList(0, 3), "the new copies first, by rank");
        assertEquals(dropped, switched[3], "then the copy the target drops");
        assertEquals(Map.of("a", 7L), transition.move(shard).handoff());

        transition = transition.with(transition.move(shard).advance(MovePhase.RETIRED, Map.of()));
        state = new PlacementState(1, ABC, transition);
        assertEquals(newCopies, List.of(state.holders(shard)));
        assertEquals(newCopies, List.of(state.queryOrder(shard)));
        assertFalse(state.holds(shard, dropped));
        assertEquals(Map.of("a", 7L), transition.move(shard).handoff(), "the handoff stays recorded");
    }

    @Test
    void shouldAcceptTheRoutesOfTheInstalledAndTheTargetGenerationOnly()
    {
        final PlacementState stable = PlacementState.stable(1, ABC);
        assertEquals(ABC.routeFingerprint(1), stable.sendFingerprint());
        final PlacementState moving = new PlacementState(1, ABC, PlacementTransition.plan(1, ABC, 2, ABCD));
        assertEquals(ABCD.routeFingerprint(2), moving.sendFingerprint(), "routes name the newest generation");
        assertTrue(moving.acceptsFingerprint(ABC.routeFingerprint(1)));
        assertTrue(moving.acceptsFingerprint(ABCD.routeFingerprint(2)));
        final PlacementState installed = PlacementState.stable(2, ABCD);
        assertFalse(installed.acceptsFingerprint(ABC.routeFingerprint(1)), "the generation before is stale");
        assertNotEquals(ABC.routeFingerprint(1), ABC.routeFingerprint(3),
            "the same nodes at a later generation carry another fingerprint");
        assertThrows(IllegalArgumentException.class, () -> new PlacementState(2, ABC,
            PlacementTransition.plan(1, ABC, 2, ABCD)));
    }

    @Test
    void shouldCountInFlightMovesAndKnowWhenTheTransitionIsDone()
    {
        PlacementTransition transition = PlacementTransition.plan(1, ABC, 2, ABCD);
        final List<ShardMove> moves = transition.moveList();
        transition = transition.with(moves.get(0).advance(MovePhase.PREPARE, Map.of()));
        assertEquals(1, transition.inFlight());
        assertFalse(transition.anySwitched());
        for (final ShardMove move : moves)
        {
            transition = transition.with(move.advance(MovePhase.RETIRED, Map.of()));
        }
        assertEquals(0, transition.inFlight());
        assertTrue(transition.isDone());
        assertTrue(transition.anySwitched());
        assertNotNull(transition.move(moves.get(0).shard()));
    }

    private static int firstShardDTakes()
    {
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            if (ABCD.replicaIndex(s, "d") >= 0)
            {
                return s;
            }
        }
        throw new AssertionError("d takes no shard");
    }

    private static List<String> copies(final ShardPlacement placement, final int shard)
    {
        final String[] copies = new String[placement.replicaCount()];
        for (int r = 0; r < copies.length; r++)
        {
            copies[r] = placement.replicaOf(shard, r);
        }
        return List.of(copies);
    }
}
