package io.orbitkv.bench;

import java.util.Random;

/**
 * How the replay assigns a request to a Manager: in turn, at random (seeded), or by its chain's first blocks, so
 * requests that share a prefix land on the same host.
 */
enum ReplayRoute
{
    ROUND_ROBIN("round-robin"),
    RANDOM("random"),
    PREFIX_AFFINITY("prefix-affinity");

    /** Blocks of the chain that pick the host under prefix affinity (a shared system prompt alone would pick one). */
    static final int AFFINITY_BLOCKS = 2;

    private final String flag;

    ReplayRoute(final String flag)
    {
        this.flag = flag;
    }

    String flag()
    {
        return flag;
    }

    static ReplayRoute of(final String flag)
    {
        for (final ReplayRoute route : values())
        {
            if (route.flag.equals(flag))
            {
                return route;
            }
        }
        throw new IllegalArgumentException("--route must be round-robin, random or prefix-affinity: '" + flag + "'");
    }

    /**
     * The host of every request of a trace.
     *
     * @param requests the trace.
     * @param hosts    number of Managers.
     * @param seed     seed of the random route.
     * @return host index per request.
     */
    int[] assign(final java.util.List<ReplayTrace.Request> requests, final int hosts, final long seed)
    {
        final int[] host = new int[requests.size()];
        final Random random = new Random(seed);
        for (int i = 0; i < host.length; i++)
        {
            host[i] = switch (this)
            {
                case ROUND_ROBIN -> i % hosts;
                case RANDOM -> random.nextInt(hosts);
                case PREFIX_AFFINITY -> affinity(requests.get(i).hashIds(), hosts);
            };
        }
        return host;
    }

    private static int affinity(final long[] chain, final int hosts)
    {
        long h = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < Math.min(AFFINITY_BLOCKS, chain.length); i++)
        {
            h = (h ^ chain[i]) * 0xBF58476D1CE4E5B9L;
            h ^= h >>> 31;
        }
        return (int)Math.floorMod(h, (long)hosts);
    }
}
