package io.orbitkv.manager.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.EngineClientException;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code orbitkv client}: an engine on the command line. Attaches to a Manager like any engine, runs one
 * operation over a deterministic {@link BlockChain} and prints one JSON object on stdout, as its last line. With
 * {@code read --peers} and {@code lookup --pin --peers} a per-key report comes first (see {@link #SOURCES_HELP}).
 *
 * <p>Exit codes: 0 done, 1 verification failed (mismatched bytes, short smoke round), 2 usage, 3 could not talk
 * to the Manager.
 */
@Command(
    name = "client",
    mixinStandardHelpOptions = true,
    description = "Attach to a Manager as an engine and publish, look up or read a deterministic block chain.",
    subcommands = {
        ClientCommand.Smoke.class,
        ClientCommand.Publish.class,
        ClientCommand.Lookup.class,
        ClientCommand.Read.class
    })
public final class ClientCommand implements Callable<Integer>
{
    static final int EXIT_OK = 0;
    static final int EXIT_VERIFY_FAILED = 1;
    static final int EXIT_MANAGER_FAILURE = 3;

    /** The per-key report of {@code read --peers} and {@code lookup --pin --peers}, for their help. */
    static final String SOURCES_HELP = "Before the JSON line, prints where each key came from, one line per run of " +
        "consecutive keys with the same source and request: 'keys 0-31: LOCAL DRAM, 2097152 bytes, request 1 " +
        "0.412 ms' ('key 7: ...' for one key). Sources: LOCAL DRAM, LOCAL SSD, PEER <nodeId> <DRAM|SSD> (the peer " +
        "and the tier of its copy), MISS, FAILED <reason> (CHECKSUM, TRANSFER, REJECTED, NO_STAGING, BUDGET, IO, CATALOG_UNAVAILABLE), " +
        "NOT_ATTEMPTED (keys after the first miss or failure, one run whatever request carried them); a restored " +
        "block whose bytes differ from the chain is marked MISMATCH. Each request carries up to the Manager's keys " +
        "per request; its time is how long it took, requests counted from 1. Then one summary line. --no-keys " +
        "prints the summary only. The JSON gets the same runs under 'sources' (from, to, source, bytes, request, " +
        "requestMs) and the counts localBlocks, peerBlocks, restoredBytes.";

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", description = "Manager directory holding cnc.dat (default: ${DEFAULT-VALUE}).",
        defaultValue = EngineClient.Context.DIR_DEFAULT)
    String dir;

    @Option(names = "--client-name", description = "Client name (default: orbitkv-cli-<pid>).")
    String clientName;

    @Option(names = "--data-region-bytes", description = "Data region to ask for; chains larger than it are moved in " +
        "windows (default: ${DEFAULT-VALUE}).", defaultValue = "64m", converter = OptionConverters.Size.class)
    long dataRegionBytes;

    @Option(names = "--attach-timeout-ms", description = "How long to wait for a ready Manager (default: ${DEFAULT-VALUE}).",
        defaultValue = "10000")
    long attachTimeoutMs;

    @Option(names = "--response-timeout-ms", description = "How long one request may wait (default: ${DEFAULT-VALUE}).",
        defaultValue = "30000")
    long responseTimeoutMs;

    public Integer call()
    {
        spec.commandLine().usage(System.out);
        return CommandLine.ExitCode.USAGE;
    }

    EngineClient connect(final long chainBytes, final int maxBlockBytes)
    {
        final long regionBytes = Math.max(Math.min(dataRegionBytes, chainBytes), maxBlockBytes);
        return EngineClient.connect(new EngineClient.Context()
            .dir(dir)
            .clientName(clientName != null ? clientName : "orbitkv-cli-" + ProcessHandle.current().pid())
            .dataRegionBytes(regionBytes)
            .attachTimeoutNs(TimeUnit.MILLISECONDS.toNanos(attachTimeoutMs))
            .responseTimeoutNs(TimeUnit.MILLISECONDS.toNanos(responseTimeoutMs)));
    }

    /** Options naming a chain, shared by every subcommand. */
    static class ChainOptions
    {
        @Option(names = "--namespace", description = "Key namespace (default: ${DEFAULT-VALUE}).", defaultValue = "orbitkv-cli")
        String namespace;

        @Option(names = "--seed", description = "Chain seed (default: ${DEFAULT-VALUE}).", defaultValue = "1")
        long seed;

        @Option(names = "--blocks", description = "Blocks in the chain (default: ${DEFAULT-VALUE}).", defaultValue = "64")
        int blocks;

        @Option(names = "--block-bytes", description = "Block size, or the largest with --min-block-bytes " +
            "(default: ${DEFAULT-VALUE}).", defaultValue = "64k", converter = OptionConverters.Size.class)
        long blockBytes;

        @Option(names = "--min-block-bytes", description = "Smallest block: sizes vary per block between this and " +
            "--block-bytes (default: fixed size).", converter = OptionConverters.Size.class)
        Long minBlockBytes;

        @Option(names = "--keys", description = "Print per-key rows (default: ${DEFAULT-VALUE}).", defaultValue = "true",
            negatable = true, fallbackValue = "true")
        boolean keys;

        BlockChain chain()
        {
            if (blockBytes > Integer.MAX_VALUE || (minBlockBytes != null && minBlockBytes > blockBytes))
            {
                throw new CommandLine.ParameterException(new CommandLine(this), "bad block sizes");
            }
            final int max = (int)blockBytes;
            final int min = minBlockBytes == null ? max : minBlockBytes.intValue();
            return new BlockChain(seed, blocks, min, max);
        }
    }

    abstract static class ClientSubcommand implements Callable<Integer>
    {
        @ParentCommand
        ClientCommand parent;

        @CommandLine.Mixin
        ChainOptions chainOptions = new ChainOptions();

        final ObjectMapper mapper = new ObjectMapper();

        public Integer call()
        {
            final BlockChain chain = chainOptions.chain();
            final ObjectNode json = mapper.createObjectNode();
            json.put("command", name());
            json.put("namespace", chainOptions.namespace);
            json.put("seed", chain.seed());
            json.put("blocks", chain.blockCount());
            json.put("minBlockBytes", chain.minBlockBytes());
            json.put("maxBlockBytes", chain.maxBlockBytes());
            final long attachStartNs = System.nanoTime();
            try (EngineClient client = parent.connect(chain.totalBytes(chain.blockCount()), chain.maxBlockBytes()))
            {
                json.put("clientId", client.clientId());
                json.put("dataRegionBytes", client.dataRegionBytes());
                json.put("attachMs", millis(System.nanoTime() - attachStartNs));
                final ClientChainRunner runner = new ClientChainRunner(client, chain, chainOptions.namespace);
                final int exit = run(client, runner, json);
                print(json);
                return exit;
            }
            catch (final EngineClientException ex)
            {
                json.put("error", ex.getMessage());
                json.put("reason", ex.reason().name());
                print(json);
                return EXIT_MANAGER_FAILURE;
            }
        }

        abstract String name();

        abstract int run(EngineClient client, ClientChainRunner runner, ObjectNode json);

        void print(final ObjectNode json)
        {
            try
            {
                System.out.println(mapper.writeValueAsString(json));
                System.out.flush();
            }
            catch (final com.fasterxml.jackson.core.JsonProcessingException ex)
            {
                throw new IllegalStateException(ex);
            }
        }

        /**
         * With {@code --keys}, the status of each key of the chain as an array under {@code field}.
         */
        void putKeyStatuses(final ObjectNode json, final String field, final ClientChainRunner runner)
        {
            if (chainOptions.keys)
            {
                final ArrayNode statuses = json.putArray(field);
                for (int i = 0; i < runner.blockCount(); i++)
                {
                    statuses.add(runner.keyStatus(i).name());
                }
            }
        }

        /**
         * The per-key report ({@link #SOURCES_HELP}): the runs of keys (with {@code --keys}) and the summary line on
         * stdout, the same runs and the counts in the JSON.
         */
        void report(final KeySources sources, final String summary, final ObjectNode json)
        {
            json.put("localBlocks", sources.count(KeyStatus.DRAM) + sources.count(KeyStatus.SSD));
            json.put("peerBlocks", sources.count(KeyStatus.PEER));
            json.put("restoredBytes", sources.restoredBytes());
            if (chainOptions.keys)
            {
                final ArrayNode runs = json.putArray("sources");
                for (final KeySources.Range range : sources.ranges())
                {
                    System.out.println(range.line());
                    final ObjectNode run = runs.addObject()
                        .put("from", range.from())
                        .put("to", range.to())
                        .put("source", range.label())
                        .put("bytes", range.bytes());
                    if (range.request() != KeySources.NOT_SENT)
                    {
                        run.put("request", range.request() + 1).put("requestMs", millis(range.requestNs()));
                    }
                }
            }
            System.out.println(summary);
        }

        static void putError(final ObjectNode json, final StatusCode errorCode, final String errorMessage)
        {
            if (errorCode != null)
            {
                json.put("error", errorCode + " " + errorMessage);
            }
        }

        static double millis(final long ns)
        {
            return Math.round(ns / 1_000.0) / 1_000.0;
        }
    }

    @Command(name = "smoke", mixinStandardHelpOptions = true,
        description = "Publish a chain, look it up, read it back and verify every byte; exit 1 on any mismatch.")
    static final class Smoke extends ClientSubcommand
    {
        String name()
        {
            return "smoke";
        }

        int run(final EngineClient client, final ClientChainRunner runner, final ObjectNode json)
        {
            long t0 = System.nanoTime();
            final ClientChainRunner.PublishSummary published = runner.publish();
            json.put("published", published.stored());
            json.put("alreadyResident", published.alreadyResident());
            json.put("noSpace", published.noSpace());
            json.put("publishMs", millis(System.nanoTime() - t0));

            t0 = System.nanoTime();
            final ClientChainRunner.LookupSummary lookup = runner.lookup(false);
            json.put("hitBlocks", lookup.prefixLength());
            json.put("lookupMs", millis(System.nanoTime() - t0));

            t0 = System.nanoTime();
            final ClientChainRunner.ReadSummary read = runner.read();
            json.put("readBlocks", read.restored());
            json.put("verifiedBytes", read.verifiedBytes());
            json.put("mismatches", read.mismatches());
            json.put("readMs", millis(System.nanoTime() - t0));

            final boolean ok = read.mismatches() == 0 && lookup.prefixLength() == runner.blockCount() &&
                read.restored() == runner.blockCount();
            json.put("ok", ok);
            return ok ? EXIT_OK : EXIT_VERIFY_FAILED;
        }
    }

    @Command(name = "publish", mixinStandardHelpOptions = true,
        description = "Publish the chain's blocks; prints stored / already resident / no space counts.")
    static final class Publish extends ClientSubcommand
    {
        String name()
        {
            return "publish";
        }

        int run(final EngineClient client, final ClientChainRunner runner, final ObjectNode json)
        {
            final long t0 = System.nanoTime();
            final ClientChainRunner.PublishSummary published = runner.publish();
            json.put("stored", published.stored());
            json.put("alreadyResident", published.alreadyResident());
            json.put("noSpace", published.noSpace());
            json.put("publishedBytes", published.storedBytes());
            json.put("requests", published.requests());
            json.put("publishMs", millis(System.nanoTime() - t0));
            putError(json, published.errorCode(), published.errorMessage());
            putKeyStatuses(json, "keyStatus", runner);
            return published.errorCode() == null ? EXIT_OK : EXIT_VERIFY_FAILED;
        }
    }

    @Command(name = "lookup", mixinStandardHelpOptions = true,
        description = {"Look up the longest resident prefix of the chain; prints the tier of each key.",
            "With --pin --peers the leases also hold a source copy on a peer for each key answered PEER. " +
                SOURCES_HELP + " Summary: 'lookup: H of N blocks held (L local, P peer), B bytes, T ms'."})
    static final class Lookup extends ClientSubcommand
    {
        @Option(names = "--pin", description = "Pin the resident prefix under leases and print their ids.")
        boolean pin;

        @Option(names = "--peers", description = "Past the local prefix, ask the cluster catalog for copies on other " +
            "Managers; prints peerKeys, unavailableKeys (keys no copy of their catalog shard could answer for) and " +
            "candidates (a standalone Manager answers as a local lookup). With --pin, " +
            "hold one source per PEER key and print the per-key report.")
        boolean peers;

        @Option(names = "--hold-ms", description = "With --pin: keep the leases (and stay attached) this long after " +
            "printing, then exit (default: ${DEFAULT-VALUE}).", defaultValue = "0")
        long holdMs;

        String name()
        {
            return "lookup";
        }

        int run(final EngineClient client, final ClientChainRunner runner, final ObjectNode json)
        {
            final long t0 = System.nanoTime();
            final ClientChainRunner.LookupSummary lookup = runner.lookup(pin, peers);
            json.put("prefixLength", lookup.prefixLength());
            json.put("lookupMs", millis(System.nanoTime() - t0));
            putError(json, lookup.errorCode(), lookup.errorMessage());
            if (pin)
            {
                final ArrayNode leases = json.putArray("leaseIds");
                for (int i = 0; i < lookup.leaseIds().length; i++)
                {
                    leases.add(lookup.leaseIds()[i]);
                }
            }
            if (peers)
            {
                json.put("peerKeys", lookup.peerKeys());
                json.put("unavailableKeys", lookup.unavailableKeys());
                final ArrayNode candidates = json.putArray("candidates");
                for (final ClientChainRunner.PeerCandidate candidate : lookup.candidates())
                {
                    candidates.addObject()
                        .put("key", candidate.key())
                        .put("ownerNode", candidate.ownerNode())
                        .put("runtimeUuid", candidate.runtimeUuid())
                        .put("tier", candidate.tier().name())
                        .put("insertionSequence", candidate.insertionSequence())
                        .put("bytes", candidate.bytes());
                }
            }
            putKeyStatuses(json, "tiers", runner);
            if (pin && peers)
            {
                report(runner.sources(), runner.sources().lookupSummary(), json);
            }
            if (pin && holdMs > 0)
            {
                // the JSON line is the signal that the leases are held; print it before holding them
                print(json);
                final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(holdMs);
                while (System.nanoTime() - deadlineNs < 0)
                {
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
                json.removeAll();
                json.put("command", "lookup");
                json.put("held", true);
            }
            return lookup.errorCode() == null ? EXIT_OK : EXIT_VERIFY_FAILED;
        }
    }

    @Command(name = "read", mixinStandardHelpOptions = true,
        description = {"Read the chain's leading resident blocks back and verify every byte; exit 1 on a mismatch.",
            "With --peers, keys after the local prefix that other Managers hold are fetched from them and verified " +
                "too; a key that cannot be delivered intact is FAILED and the read stops there (exit 0: the blocks " +
                "before it are good). " + SOURCES_HELP +
                " Summary: 'read: R of N blocks restored (L local, P peer), B bytes, T ms, mismatches: M'."})
    static final class Read extends ClientSubcommand
    {
        @Option(names = "--peers", description = "Fetch the blocks after the local prefix from peers that hold them " +
            "and print the per-key report (a standalone Manager reads locally only).")
        boolean peers;

        String name()
        {
            return "read";
        }

        int run(final EngineClient client, final ClientChainRunner runner, final ObjectNode json)
        {
            final long t0 = System.nanoTime();
            final ClientChainRunner.ReadSummary read = runner.read(peers);
            json.put("prefixLength", read.restored());
            json.put("restored", read.restored());
            json.put("verifiedBytes", read.verifiedBytes());
            json.put("mismatches", read.mismatches());
            json.put("readMs", millis(System.nanoTime() - t0));
            putError(json, read.errorCode(), read.errorMessage());
            putKeyStatuses(json, "tiers", runner);
            if (peers)
            {
                report(runner.sources(), runner.sources().readSummary(read.mismatches()), json);
            }
            return read.mismatches() == 0 && read.errorCode() == null ? EXIT_OK : EXIT_VERIFY_FAILED;
        }
    }
}
