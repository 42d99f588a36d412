package io.orbitkv.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.orbitkv.bench.peer.BenchPeer;
import io.orbitkv.manager.cli.OrbitKvCli;
import org.junit.jupiter.api.Test;

/**
 * The Manager ships no benchmark: every class of the manager artifact (its jar, or its classes directory when the
 * reactor hands that over) is scanned for the benchmark types that live in this module, for bench-like names and
 * packages, and for any reference to {@code io.orbitkv.bench}.
 */
final class ManagerHoldsNoBenchmarkTest
{
    /** Types that moved here from the Manager, by simple name (outer class). */
    private static final Set<String> HARNESS_TYPES = Set.of(
        "BenchMain", "BenchCommand", "BenchLocalCommand", "BenchRingEchoCommand", "BenchSsdCommand",
        "BenchMembershipCommand", "BenchCatalogCommand", "BenchDiscoveryCommand", "BenchCliCommand", "CatalogBench",
        "DiscoveryBench", "MembershipBench", "BenchPeer", "ChildJvm", "RespClient", "StallDeadline");

    /** A benchmark by name: Bench..., ...Bench or ...Benchmark, and anything in a bench package. */
    private static final Pattern BENCH_NAME = Pattern.compile("Bench[A-Z0-9].*|.*Bench|.*Benchmark");

    private static final byte[] HARNESS_REFERENCE = "io/orbitkv/bench".getBytes(StandardCharsets.US_ASCII);

    @Test
    void shouldFindNoBenchmarkClassInTheManagerArtifact() throws Exception
    {
        final Map<String, byte[]> classes = managerClasses();
        assertTrue(classes.containsKey("io/orbitkv/manager/cli/OrbitKvCli.class"), "scanned the Manager's classes");
        assertTrue(classes.containsKey("io/orbitkv/manager/Manager.class"), "scanned the Manager's classes");

        final List<String> offenders = new ArrayList<>();
        for (final Map.Entry<String, byte[]> entry : classes.entrySet())
        {
            final String path = entry.getKey();
            if (isBenchmark(path))
            {
                offenders.add(path + " (a benchmark type)");
            }
            else if (contains(entry.getValue(), HARNESS_REFERENCE))
            {
                offenders.add(path + " (refers to io.orbitkv.bench)");
            }
        }
        assertEquals(List.of(), offenders, "benchmark code in the Manager's artifact " + managerLocation());
    }

    @Test
    void shouldTellABenchmarkTypeFromAProductType()
    {
        assertTrue(isBenchmark("io/orbitkv/manager/peer/bench/BenchPeer.class"));
        assertTrue(isBenchmark("io/orbitkv/manager/cli/CatalogBench$Phase.class"));
        assertTrue(isBenchmark("io/orbitkv/manager/cli/BenchSsdCommand$E2e.class"));
        assertTrue(isBenchmark("io/orbitkv/manager/cli/RespClient.class"));
        assertTrue(isBenchmark("io/orbitkv/manager/catalog/IndexStorageBenchmark.class"));
        assertFalse(isBenchmark("io/orbitkv/manager/cli/OrbitKvCli$HarnessPointer.class"));
        assertFalse(isBenchmark("io/orbitkv/manager/cli/ClientChainRunner.class"));
        assertTrue(contains(bytesOf(BenchPeer.class), HARNESS_REFERENCE), "a harness type names its package");
    }

    private static boolean isBenchmark(final String classPath)
    {
        final String outer = outerSimpleName(classPath);
        return classPath.contains("/bench/") || HARNESS_TYPES.contains(outer) || BENCH_NAME.matcher(outer).matches();
    }

    private static byte[] bytesOf(final Class<?> type)
    {
        try (InputStream in = type.getResourceAsStream(type.getSimpleName() + ".class"))
        {
            return in.readAllBytes();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static Path managerLocation()
    {
        try
        {
            return Path.of(OrbitKvCli.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (final URISyntaxException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private static Map<String, byte[]> managerClasses() throws IOException
    {
        final Path location = managerLocation();
        final Map<String, byte[]> classes = new LinkedHashMap<>();
        if (Files.isDirectory(location))
        {
            try (Stream<Path> files = Files.walk(location))
            {
                for (final Path file : (Iterable<Path>)files.filter((p) -> p.toString().endsWith(".class"))::iterator)
                {
                    classes.put(location.relativize(file).toString().replace('\\', '/'), Files.readAllBytes(file));
                }
            }
        }
        else
        {
            try (JarFile jar = new JarFile(location.toFile()))
            {
                for (final JarEntry entry : (Iterable<JarEntry>)jar.stream()::iterator)
                {
                    if (entry.getName().endsWith(".class"))
                    {
                        try (InputStream in = jar.getInputStream(entry))
                        {
                            classes.put(entry.getName(), in.readAllBytes());
                        }
                    }
                }
            }
        }
        return classes;
    }

    private static String outerSimpleName(final String classPath)
    {
        final String file = classPath.substring(classPath.lastIndexOf('/') + 1, classPath.length() - ".class".length());
        final int nested = file.indexOf('$');
        return nested < 0 ? file : file.substring(0, nested);
    }

    private static boolean contains(final byte[] haystack, final byte[] needle)
    {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (haystack[i + j] != needle[j])
                {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
