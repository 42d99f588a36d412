package io.orbitkv.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Mooncake's Transfer Engine as published on the package index (its Python wheel: the wheels carry no C API our FFM
 * binding could load), over TCP on loopback between two processes, reading blocks of the bench's size one at a time
 * and four per batch: {@code benches/tools/mooncake_te_anchor.py} run with the engines' venv interpreter
 * ({@code $ORBITKV_ENGINES_PYTHON}, else {@code $ORBITKV_ENGINES_VENV/bin/python}, else the checkout's
 * {@code build/engines/venv}), where {@code scripts/engines} installs the wheel. Not there: reported unavailable.
 */
final class MooncakeWheelAnchor
{
    private static final long EXTRA_TIMEOUT_SECS = 60;

    private MooncakeWheelAnchor()
    {
    }

    /**
     * @param blockBytes bytes per read.
     * @param seconds    how long each batch size is measured.
     * @return {available, reason | gbps_batch1, gbps_batch4, python}.
     */
    static Map<String, Object> measure(final int blockBytes, final int seconds) throws InterruptedException
    {
        final Map<String, Object> result = new LinkedHashMap<>();
        final Path python = python();
        final Path script = BenchTools.repoRoot().resolve("benches/tools/mooncake_te_anchor.py");
        if (null == python)
        {
            result.put("available", false);
            result.put("reason", "no engines venv (scripts/engines installs it with the Mooncake wheel)");
            return result;
        }
        final List<String> command = new ArrayList<>(List.of(python.toString(), script.toString(),
            "--block-bytes", Integer.toString(blockBytes), "--seconds", Integer.toString(seconds),
            "--batch", "1", "--batch", "4"));
        try
        {
            final Path log = Files.createTempFile("orbitkv-mooncake-anchor", ".log");
            final Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
            final String stdout;
            if (!process.waitFor(2L * seconds + EXTRA_TIMEOUT_SECS, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                result.put("available", false);
                result.put("reason", "the anchor did not finish in time (log " + log + ")");
                return result;
            }
            stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            final String last = stdout.isEmpty() ? "{}" : stdout.substring(stdout.lastIndexOf('\n') + 1);
            final JsonNode json = new ObjectMapper().readTree(last);
            if (!json.path("available").asBoolean())
            {
                result.put("available", false);
                result.put("reason", json.path("reason").asText("exit " + process.exitValue() + ", log " + log));
                return result;
            }
            result.put("available", true);
            result.put("python", python.toString());
            for (final JsonNode run : json.get("runs"))
            {
                result.put("gbps_batch" + run.get("batch").asInt(), run.get("gbps").asDouble());
            }
            Files.deleteIfExists(log);
        }
        catch (final IOException ex)
        {
            result.put("available", false);
            result.put("reason", ex.toString());
        }
        return result;
    }

    private static Path python()
    {
        final List<Path> candidates = new ArrayList<>();
        final String explicit = System.getenv("ORBITKV_ENGINES_PYTHON");
        if (null != explicit && !explicit.isEmpty())
        {
            candidates.add(Path.of(explicit));
        }
        final String venv = System.getenv("ORBITKV_ENGINES_VENV");
        if (null != venv && !venv.isEmpty())
        {
            candidates.add(Path.of(venv, "bin", "python"));
        }
        candidates.add(BenchTools.repoRoot().resolve("build/engines/venv/bin/python"));
        for (final Path candidate : candidates)
        {
            if (Files.isExecutable(candidate))
            {
                return candidate;
            }
        }
        return null;
    }
}
