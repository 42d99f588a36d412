package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The placement every Manager acts on: the installed generation and, while one runs, the transition to the next.
 * From the two it derives, per shard, which nodes hold a copy (catalog hosts receive the owners' streams for it) and
 * in which order a requester asks them:
 * <table>
 *   <tr><th>move phase</th><th>holders</th><th>query order</th></tr>
 *   <tr><td>no move, PENDING</td><td>old copies</td><td>old copies by rank</td></tr>
 *   <tr><td>PREPARE, CAUGHT_UP</td><td>old and new copies</td><td>old copies by rank</td></tr>
 *   <tr><td>SWITCHED</td><td>old and new copies</td><td>new copies by rank, then the old ones the target drops</td></tr>
 *   <tr><td>RETIRED</td><td>new copies</td><td>new copies by rank</td></tr>
 * </table>
 * A shard with no move keeps the copies of the installed placement, which the target gives it too. Immutable; the
 * arrays it hands out must not be modified.
 *
 * <p>Routes carry the fingerprint of the newest generation the sender knows ({@link #sendFingerprint()}); a host
 * accepts the installed generation's and, during a transition, the target's ({@link #acceptsFingerprint}).
 */
public final class PlacementState
{
    /**
     * Most nodes that hold one shard, or that a requester may ask for it, at once: its old and its new copies during
     * a transition.
     */
    public static final int MAX_HOLDERS = 2 * ShardPlacement.MAX_REPLICAS;

    private final long generation;
    private final ShardPlacement placement;
    private final PlacementTransition transition;
    private final String[][] holders = new String[StateKeyShard.SHARD_COUNT][];
    private final String[][] queryOrder = new String[StateKeyShard.SHARD_COUNT][];
    private final long installedFingerprint;
    private final long targetFingerprint;

    /**
     * @param generation the installed generation, 1 or more.
     * @param placement  its placement.
     * @param transition the transition from it in flight, or null.
     */
    public PlacementState(final long generation, final ShardPlacement placement, final PlacementTransition transition)
    {
        if (generation < 1)
        {
            throw new IllegalArgumentException("placement generation must be 1 or more, got " + generation);
        }
        if (null != transition && transition.fromGeneration() != generation)
        {
            throw new IllegalArgumentException("transition from generation " + transition.fromGeneration() +
                " does not start at the installed generation " + generation);
        }
        this.generation = generation;
        this.placement = Objects.requireNonNull(placement);
        this.transition = transition;
        this.installedFingerprint = placement.routeFingerprint(generation);
        this.targetFingerprint = null == transition ? installedFingerprint :
            transition.target().routeFingerprint(transition.toGeneration());
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            final ShardMove move = null == transition ? null : transition.move(s);
            final List<String> old = copies(placement, s);
            if (null == move || move.phase() == MovePhase.PENDING)
            {
                holders[s] = old.toArray(String[]::new);
                queryOrder[s] = holders[s];
                continue;
            }
            final List<String> next = copies(transition.target(), s);
            final List<String> held = new ArrayList<>(move.phase().oldCopiesHold() ? old : List.of());
            next.stream().filter((n) -> !held.contains(n)).forEach(held::add);
            holders[s] = held.toArray(String[]::new);
            if (!move.phase().queriesSwitched())
            {
                queryOrder[s] = old.toArray(String[]::new);
            }
            else
            {
                final List<String> order = new ArrayList<>(next);
                if (move.phase().oldCopiesHold())
                {
                    old.stream().filter((n) -> !order.contains(n)).forEach(order::add);
                }
                queryOrder[s] = order.toArray(String[]::new);
            }
        }
    }

    /**
     * @param generation the installed generation.
     * @param placement  its placement.
     * @return the state with no transition in flight.
     */
    public static PlacementState stable(final long generation, final ShardPlacement placement)
    {
        return new PlacementState(generation, placement, null);
    }

    private static List<String> copies(final ShardPlacement placement, final int shard)
    {
        final List<String> copies = new ArrayList<>(placement.replicaCount());
        for (int r = 0; r < placement.replicaCount(); r++)
        {
            copies.add(placement.replicaOf(shard, r));
        }
        return copies;
    }

    /**
     * @return the installed generation.
     */
    public long generation()
    {
        return generation;
    }

    /**
     * @return the installed placement.
     */
    public ShardPlacement placement()
    {
        return placement;
    }

    /**
     * @return the transition in flight, or null.
     */
    public PlacementTransition transition()
    {
        return transition;
    }

    /**
     * @return whether no transition is in flight.
     */
    public boolean isStable()
    {
        return null == transition;
    }

    /**
     * @return the placement the cluster is heading to: the transition's target, or the installed one.
     */
    public ShardPlacement target()
    {
        return null == transition ? placement : transition.target();
    }

    /**
     * @param shard shard in [0, 16).
     * @return the nodes holding a copy of the shard now (shared array: do not modify).
     */
    public String[] holders(final int shard)
    {
        return holders[shard];
    }

    /**
     * @param shard  shard in [0, 16).
     * @param nodeId a node.
     * @return whether the node holds a copy of the shard now.
     */
    public boolean holds(final int shard, final String nodeId)
    {
        for (final String holder : holders[shard])
        {
            if (holder.equals(nodeId))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @param shard shard in [0, 16).
     * @return the nodes a requester asks for the shard, in order (shared array: do not modify).
     */
    public String[] queryOrder(final int shard)
    {
        return queryOrder[shard];
    }

    /**
     * @return the route fingerprint this Manager's routes carry: the target generation's during a transition.
     */
    public long sendFingerprint()
    {
        return targetFingerprint;
    }

    /**
     * @return the route fingerprint of the installed generation.
     */
    public long installedFingerprint()
    {
        return installedFingerprint;
    }

    /**
     * @param fingerprint a route's fingerprint.
     * @return whether it names the installed generation or the transition's target.
     */
    public boolean acceptsFingerprint(final long fingerprint)
    {
        return fingerprint == installedFingerprint || fingerprint == targetFingerprint;
    }

    public boolean equals(final Object o)
    {
        return o instanceof PlacementState other && generation == other.generation &&
            placement.equals(other.placement) && Objects.equals(transition, other.transition);
    }

    public int hashCode()
    {
        return 31 * Long.hashCode(generation) + Objects.hashCode(transition);
    }

    public String toString()
    {
        return "PlacementState{generation=" + generation + ", placement=" + placement +
            (null == transition ? ", stable" : ", transition=" + transition) + '}';
    }
}
