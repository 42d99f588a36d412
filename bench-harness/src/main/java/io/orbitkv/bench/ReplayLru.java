package io.orbitkv.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An in-process cache of block ids that replays a request the way the replay's engine drives a Manager: the longest
 * resident prefix of the chain is read (each block moved to the most recent end, in chain order), then every later
 * block that is not resident is inserted at the most recent end, evicting the least recent block while full. A block
 * after the first miss that is still resident is left where it is (a re-publish of a resident block does not touch
 * it). A capacity of {@link Long#MAX_VALUE} never evicts.
 */
final class ReplayLru
{
    private final long capacity;
    private final LinkedHashMap<Long, Boolean> blocks = new LinkedHashMap<>(1 << 16, 0.75f, true);

    ReplayLru(final long capacity)
    {
        this.capacity = capacity;
    }

    /**
     * Replay one chain.
     *
     * @param chain the request's block ids.
     * @return how many leading blocks were hits.
     */
    int access(final long[] chain)
    {
        int prefix = 0;
        while (prefix < chain.length && blocks.containsKey(chain[prefix]))
        {
            prefix++;
        }
        for (int i = 0; i < prefix; i++)
        {
            blocks.get(chain[i]);
        }
        for (int i = prefix; i < chain.length; i++)
        {
            if (!blocks.containsKey(chain[i]))
            {
                if (blocks.size() >= capacity)
                {
                    final Map.Entry<Long, Boolean> eldest = blocks.entrySet().iterator().next();
                    blocks.remove(eldest.getKey());
                }
                blocks.put(chain[i], Boolean.TRUE);
            }
        }
        return prefix;
    }

    int size()
    {
        return blocks.size();
    }
}
