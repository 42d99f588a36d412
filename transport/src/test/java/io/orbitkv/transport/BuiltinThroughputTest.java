package io.orbitkv.transport;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A short loopback throughput figure, run only when ORBITKV_BENCH_TRANSPORT is set (not a benchmark: the bench
 * command compares against iperf3 on a quiet box).
 */
@EnabledIfEnvironmentVariable(named = "ORBITKV_BENCH_TRANSPORT", matches = ".+")
class BuiltinThroughputTest
{
    @Test
    void shouldReportThroughputOfTwoMebibyteReads()
    {
        for (final int streams : new int[]{1, 4})
        {
            for (final int depth : new int[]{1, 4})
            {
                final double rate = BuiltinThroughput.bytesPerSecond(streams, 2 * 1024 * 1024, depth,
                    TimeUnit.SECONDS.toNanos(2));
                System.out.printf("builtin transport: streams %d depth %d: %.2f Gbit/s%n", streams, depth, rate * 8 / 1e9);
                assertTrue(rate > 0);
            }
        }
    }
}
