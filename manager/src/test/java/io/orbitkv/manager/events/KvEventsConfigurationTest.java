package io.orbitkv.manager.events;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import org.agrona.IoUtil;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KvEventsConfigurationTest
{
    @Test
    void shouldBeOffByDefault()
    {
        final ManagerContext ctx = new ManagerContext();
        assertNull(ctx.kvEventsEndpoint());
        assertNull(ctx.kvEventsReplayEndpoint());
    }

    @Test
    void shouldRefuseEndpointsThatAreNotZmqOnesNamingTheFlag()
    {
        assertRefused(new ManagerContext().kvEventsEndpoint("localhost:5557"), "--kv-events-endpoint");
        assertRefused(new ManagerContext().kvEventsEndpoint("tcp://host"), "--kv-events-endpoint");
        assertRefused(new ManagerContext().kvEventsEndpoint("tcp://*:5557").kvEventsReplayEndpoint("udp://*:1"),
            "--kv-events-replay-endpoint");
        assertRefused(new ManagerContext().kvEventsReplayEndpoint("tcp://*:5558"), "needs --kv-events-endpoint");
        assertRefused(new ManagerContext().kvEventsEndpoint("tcp://*:5557")
            .kvEventsTopic("t".repeat(Configuration.MAX_KV_EVENTS_TOPIC_BYTES + 1)), "--kv-events-topic");
    }

    @Test
    void shouldFailTheLaunchClearlyWhenTheEndpointCannotBeBound() throws Exception
    {
        final File dir = Files.createTempDirectory("okv-kv-events").toFile();
        try (ServerSocket taken = new ServerSocket(0))
        {
            final ManagerContext ctx = new ManagerContext()
                .dir(dir)
                .poolBytes(4L << 20)
                .maxBlockBytes(1 << 20)
                .indexBudgetBytes(1L << 20)
                .maxClients(2)
                .idleStrategy(new YieldingIdleStrategy())
                .kvEventsEndpoint("tcp://*:" + taken.getLocalPort());
            final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> Manager.launch(ctx).close());
            assertTrue(ex.getMessage().contains("cannot open the KV event sockets"), ex.getMessage());
        }
        finally
        {
            IoUtil.delete(dir, true);
        }
    }

    private static void assertRefused(final ManagerContext ctx, final String words)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, ctx::conclude);
        assertTrue(ex.getMessage().contains(words), ex.getMessage());
    }
}
