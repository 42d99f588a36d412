package io.orbitkv.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code orbitkv bench}: measurements against anchors taken in the same run. JMH micro-benchmarks are run by
 * {@code scripts/orbitkv bench jmh [JMH args]} (benchmarks.jar), not through this class.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
        "Benchmarks, each printed as a ratio to an anchor measured in the same run.",
        "  local   engine ring vs bare shm ring ping-pong; Publish/Read vs MemorySegment.copy",
        "  ssd     SSD tier storage path and end-to-end Read vs fio on the same file",
        "  membership   join time, view convergence and etcd call rate against a real etcd",
        "  catalog  catalog delta apply, cold lookup, update lag, index bytes, snapshot rebuild vs Redis",
        "  discovery  peer lookups through three real Managers (cold, warm, publish-to-discoverable) vs Redis MGET",
        "  cli     CLI calls through scripts/orbitkv next to a running Manager vs java -version",
        "  transfer  peer Reads of 2 MiB blocks and remote restores between two Managers vs iperf3 and raw TCP",
        "  replay  a request trace through N Managers: hit fractions vs isolated, global and infinite LRUs, TTFT",
        "  client  C and Python clients vs the Java client (Lookup RTT); Python put/get vs a memoryview copy",
        "  (scripts/orbitkv bench jmh [ARGS] runs the JMH micro-benchmarks)"
    },
    subcommands = {
        BenchLocalCommand.class, BenchRingEchoCommand.class, BenchSsdCommand.class, BenchSsdPersistCommand.class,
        BenchMembershipCommand.class,
        BenchCatalogCommand.class, BenchDiscoveryCommand.class, BenchCliCommand.class, BenchTransferCommand.class,
        BenchReplayCommand.class, BenchClientCommand.class
    })
public final class BenchCommand implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(System.out);
    }
}
