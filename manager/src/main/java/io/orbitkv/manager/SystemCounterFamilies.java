package io.orbitkv.manager;

import io.orbitkv.manager.authority.AuthorityCounter;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.events.KvEventCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.peer.PeerAuthCounter;
import io.orbitkv.manager.peer.PeerGuardCounter;
import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.StoreCounter;
import io.orbitkv.manager.transfer.TransferCounter;
import org.agrona.concurrent.status.CountersManager;

import java.util.stream.Stream;

/**
 * Which parts have fixed-id counters: the one list from which the Manager, its tools and tests allocate the
 * {@link SystemCounters}.
 */
public final class SystemCounterFamilies
{
    private SystemCounterFamilies()
    {
    }

    /**
     * @return every part's family, one array each.
     */
    public static CounterDescriptor[][] all()
    {
        return new CounterDescriptor[][]
        {
            RingCounter.values(),
            StoreCounter.values(),
            CatalogCounter.values(),
            TransferCounter.values(),
            MembershipCounter.values(),
            KvEventCounter.values(),
            AuthorityCounter.values(),
            PeerAuthCounter.values(),
            PeerGuardCounter.values(),
            SystemCounterDescriptor.values(),
        };
    }

    /**
     * @return every system counter descriptor, in no particular order.
     */
    public static Stream<CounterDescriptor> descriptors()
    {
        return Stream.of(all()).flatMap(Stream::of);
    }

    /**
     * @param countersManager the CnC file's, nothing allocated yet.
     * @return the system counters in it.
     */
    public static SystemCounters allocate(final CountersManager countersManager)
    {
        return new SystemCounters(countersManager, all());
    }

    /**
     * @return system counters nobody else can read (tools and tests without a CnC file).
     */
    public static SystemCounters inMemory()
    {
        return SystemCounters.inMemory(all());
    }
}
