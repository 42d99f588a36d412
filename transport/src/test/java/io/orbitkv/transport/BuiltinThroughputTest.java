package io.orbitkv.transport;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

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

    @Test
    void shouldReportThroughputOverTlsAgainstPlainInTheSameRun(@TempDir final Path certificates) throws Exception
    {
        TestCertificates.make(certificates, "ca", "node");
        final TransportTls tls = TransportTls.fromPem(certificates.resolve("node.pem"), certificates.resolve("node.key"),
            certificates.resolve("ca.pem"));
        for (final int streams : new int[]{1, 4})
        {
            for (int pass = 0; pass < 2; pass++)
            {
                final double plain = BuiltinThroughput.bytesPerSecond(streams, 2 * 1024 * 1024, 4,
                    TimeUnit.SECONDS.toNanos(2));
                final double overTls = BuiltinThroughput.bytesPerSecond(streams, 2 * 1024 * 1024, 4,
                    TimeUnit.SECONDS.toNanos(2), tls);
                System.out.printf("builtin transport, streams %d depth 4, pass %d: plain %.2f Gbit/s, TLS %.2f Gbit/s " +
                    "(%.2fx)%n", streams, pass, plain * 8 / 1e9, overTls * 8 / 1e9, overTls / plain);
                assertTrue(overTls > 0);
            }
        }
    }
}
