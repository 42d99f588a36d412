package io.orbitkv.manager.membership;

import java.util.Map;
import java.util.TreeMap;

/**
 * One shard's move in a {@link PlacementTransition}: its phase and, from {@link MovePhase#CAUGHT_UP} on, the handoff
 * watermarks: for each owner node, the sequence through which every new copy had applied that owner's stream when
 * the copies reported complete coverage (the smallest over the new copies).
 *
 * @param shard     shard in [0, 16).
 * @param phase     where the move stands.
 * @param handoff   owner node id to applied stream sequence; empty before the handoff.
 */
public record ShardMove(int shard, MovePhase phase, Map<String, Long> handoff)
{
    public ShardMove
    {
        handoff = Map.copyOf(new TreeMap<>(handoff));
    }

    /**
     * @param shard shard in [0, 16).
     * @return a move not started yet.
     */
    public static ShardMove pending(final int shard)
    {
        return new ShardMove(shard, MovePhase.PENDING, Map.of());
    }

    /**
     * @param next    the phase after this one.
     * @param handoff watermarks to record (kept as they are when empty).
     * @return this move in the next phase.
     */
    public ShardMove advance(final MovePhase next, final Map<String, Long> handoff)
    {
        return new ShardMove(shard, next, handoff.isEmpty() ? this.handoff : handoff);
    }
}
