package io.orbitkv.manager.ring;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The mapping of one client's data region, shared by its session and by the I/O that may still write into it after
 * the client went away (peer reads, SSD reads straight into the region). Unmapped when the last holder closes it, so
 * no late write can land in address space that has been handed to something else. The session is the first holder.
 */
final class RegionMapping implements AutoCloseable
{
    private final Arena arena;
    private final AtomicInteger holders = new AtomicInteger(1);

    RegionMapping(final Arena arena)
    {
        this.arena = arena;
    }

    /**
     * One more holder, who closes the returned mapping once done with it.
     *
     * @return this mapping.
     */
    RegionMapping hold()
    {
        holders.incrementAndGet();
        return this;
    }

    /**
     * @return whether the region is still mapped.
     */
    boolean isMapped()
    {
        return holders.get() > 0;
    }

    /**
     * One holder is done; the last unmaps the region.
     */
    public void close()
    {
        if (0 == holders.decrementAndGet())
        {
            arena.close();
        }
    }
}
