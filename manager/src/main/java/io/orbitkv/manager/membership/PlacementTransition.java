package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A change from the installed placement generation to a target one, kept in etcd while it runs: the target placement
 * and one {@link ShardMove} per shard whose set of copies differs (shards whose copies stay the same have none and
 * are untouched). Immutable: each step the reconciler takes is a new transition written in one transaction.
 *
 * @param fromGeneration the installed generation the transition starts from.
 * @param toGeneration   the generation it installs when every move is retired.
 * @param target         the placement of {@code toGeneration}.
 * @param moves          by shard; null where the shard does not move.
 */
public record PlacementTransition(long fromGeneration, long toGeneration, ShardPlacement target, ShardMove[] moves)
{
    public PlacementTransition
    {
        if (toGeneration <= fromGeneration || fromGeneration < 1)
        {
            throw new IllegalArgumentException(
                "a transition goes to a later generation: " + fromGeneration + " -> " + toGeneration);
        }
        if (moves.length != StateKeyShard.SHARD_COUNT)
        {
            throw new IllegalArgumentException("a transition has one entry per shard, got " + moves.length);
        }
        moves = moves.clone();
        for (int s = 0; s < moves.length; s++)
        {
            if (null != moves[s] && moves[s].shard() != s)
            {
                throw new IllegalArgumentException("move of shard " + moves[s].shard() + " at index " + s);
            }
        }
    }

    /**
     * The transition from one placement to another: a pending move for every shard whose copies differ as sets.
     *
     * @param fromGeneration installed generation.
     * @param from           installed placement.
     * @param toGeneration   the target's generation.
     * @param to             the target placement.
     * @return the planned transition (possibly with no move at all).
     */
    public static PlacementTransition plan(
        final long fromGeneration, final ShardPlacement from, final long toGeneration, final ShardPlacement to)
    {
        final ShardMove[] moves = new ShardMove[StateKeyShard.SHARD_COUNT];
        for (int s = 0; s < moves.length; s++)
        {
            if (!copies(from, s).equals(copies(to, s)))
            {
                moves[s] = ShardMove.pending(s);
            }
        }
        return new PlacementTransition(fromGeneration, toGeneration, to, moves);
    }

    private static HashSet<String> copies(final ShardPlacement placement, final int shard)
    {
        final HashSet<String> copies = new HashSet<>();
        for (int r = 0; r < placement.replicaCount(); r++)
        {
            copies.add(placement.replicaOf(shard, r));
        }
        return copies;
    }

    /**
     * @param shard shard in [0, 16).
     * @return its move, or null when its copies stay.
     */
    public ShardMove move(final int shard)
    {
        return moves[shard];
    }

    /**
     * @return every move, by shard.
     */
    public List<ShardMove> moveList()
    {
        final List<ShardMove> list = new ArrayList<>();
        for (final ShardMove move : moves)
        {
            if (null != move)
            {
                list.add(move);
            }
        }
        return list;
    }

    /**
     * @param phase a phase.
     * @return moves in that phase.
     */
    public int count(final MovePhase phase)
    {
        int count = 0;
        for (final ShardMove move : moves)
        {
            count += null != move && move.phase() == phase ? 1 : 0;
        }
        return count;
    }

    /**
     * @return moves started and not retired yet (the ones {@code --max-shard-moves} bounds).
     */
    public int inFlight()
    {
        int count = 0;
        for (final ShardMove move : moves)
        {
            count += null != move && move.phase() != MovePhase.PENDING && move.phase() != MovePhase.RETIRED ? 1 : 0;
        }
        return count;
    }

    /**
     * @return whether every move is retired: the target can be installed.
     */
    public boolean isDone()
    {
        for (final ShardMove move : moves)
        {
            if (null != move && move.phase() != MovePhase.RETIRED)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return whether some move switched queries already (such a transition is finished, never abandoned).
     */
    public boolean anySwitched()
    {
        for (final ShardMove move : moves)
        {
            if (null != move && move.phase().queriesSwitched())
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @param move the shard's move in its new phase.
     * @return this transition with that move replaced.
     */
    public PlacementTransition with(final ShardMove move)
    {
        final ShardMove[] next = moves.clone();
        next[move.shard()] = move;
        return new PlacementTransition(fromGeneration, toGeneration, target, next);
    }

    public boolean equals(final Object o)
    {
        return o instanceof PlacementTransition other && fromGeneration == other.fromGeneration &&
            toGeneration == other.toGeneration && target.equals(other.target) && Arrays.equals(moves, other.moves);
    }

    public int hashCode()
    {
        return 31 * Long.hashCode(toGeneration) + Arrays.hashCode(moves);
    }

    public String toString()
    {
        return "PlacementTransition{" + fromGeneration + " -> " + toGeneration + ", target=" + target + ", moves=" +
            moveList() + '}';
    }

    /**
     * @return each move's phase by shard.
     */
    public Map<Integer, MovePhase> phases()
    {
        final Map<Integer, MovePhase> phases = new TreeMap<>();
        for (final ShardMove move : moves)
        {
            if (null != move)
            {
                phases.put(move.shard(), move.phase());
            }
        }
        return phases;
    }
}
