package io.orbitkv.bench;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench catalog} end to end with tiny sizes and no Redis (--no-anchor), so it runs in CI in seconds: every phase
 * runs over real peer transports and the JSON carries every figure (anchors and ratios null).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CatalogBenchSmokeTest
{
    @TempDir
    Path dir;

    @Test
    void shouldRunEveryCatalogBenchmarkWithoutAnchorAndWriteEveryFieldToJson() throws Exception
    {
        final Path json = dir.resolve("catalog.json");
        final StringWriter text = new StringWriter();
        final CommandLine commandLine = BenchMain.commandLine();
        commandLine.setOut(new PrintWriter(text));
        final int exitCode = commandLine.execute("bench", "catalog", "--no-anchor",
            "--keys", "4000", "--records", "8000", "--warmup-records", "2000",
            "--lookup-keys", "1000", "--queries", "200", "--warmup-queries", "50",
            "--lag-rate", "5000", "--lag-seconds", "1",
            "--dir", dir.resolve("peers").toString(), "--json", json.toString());
        assertEquals(0, exitCode, text.toString());

        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        for (final String field : new String[]{
            "delta_apply_records_per_s", "delta_apply_first_pass_records_per_s",
            "delta_bytes_per_record_full_batches", "host_index_bytes_per_entry",
            "catalog_record_table_bytes_per_entry_exact_fit", "snapshot_rebuild_ms", "cold_lookup_p50_us",
            "cold_lookup_p99_us", "update_lag_p50_us", "update_lag_p99_us", "metadata_bytes_per_record_steady" })
        {
            assertTrue(root.path(field).isNumber(), field + " in " + root);
            assertTrue(root.path(field).asDouble() > 0, field + " in " + root);
        }
        assertEquals(4000, root.path("snapshot_entries").asLong());
        assertEquals(4000, root.path("host_view_entries").asLong());
        assertEquals(5000, root.path("update_lag_records").asLong());
        for (final String field : new String[]{
            "anchor_redis_set_p64_rps", "anchor_redis_set_p64_empty_db_rps", "anchor_redis_mget_p99_us",
            "delta_apply_ratio", "delta_apply_first_pass_ratio", "cold_lookup_p99_ratio",
            "snapshot_rebuild_ratio", "update_lag_p99_ratio" })
        {
            assertTrue(root.has(field) && root.get(field).isNull(), field + " without anchor: " + root.get(field));
        }
        assertEquals(11, root.path("summary").size(), root.path("summary").toString());
        assertTrue(text.toString().contains("| metric | OrbitKV | anchor (same run) | ratio | goal |"), text.toString());
    }

    @Test
    void shouldRunEveryPhaseUnauthenticatedAndAuthenticatedAndWriteTheirRatios() throws Exception
    {
        final Path secret = dir.resolve("secret");
        java.nio.file.Files.writeString(secret, "bench-catalog-smoke-secret-0123456789");
        java.nio.file.Files.setPosixFilePermissions(secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        final Path json = dir.resolve("catalog-auth.json");
        final StringWriter text = new StringWriter();
        final CommandLine commandLine = BenchMain.commandLine();
        commandLine.setOut(new PrintWriter(text));
        commandLine.setErr(new PrintWriter(new StringWriter()));
        assertTrue(0 != commandLine.execute("bench", "catalog", "--no-anchor", "--auth-compare"),
            "--auth-compare without a secret is refused");
        final int exitCode = commandLine.execute("bench", "catalog", "--no-anchor",
            "--keys", "4000", "--records", "8000", "--warmup-records", "2000",
            "--lookup-keys", "1000", "--queries", "200", "--warmup-queries", "50",
            "--lag-rate", "5000", "--lag-seconds", "1", "--cluster-secret-file", secret.toString(), "--auth-compare",
            "--dir", dir.resolve("peers").toString(), "--json", json.toString());
        assertEquals(0, exitCode, text.toString());
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        for (final String pass : new String[]{"auth_off", "auth_on"})
        {
            assertTrue(root.path(pass).path("delta_apply_records_per_s").asDouble() > 0, pass + " in " + root);
            assertEquals(4000, root.path(pass).path("snapshot_entries").asLong());
        }
        assertTrue(root.path("ratio_on_over_off").path("delta_apply_records_per_s").asDouble() > 0, root.toString());
        assertEquals(1.0, root.path("ratio_on_over_off").path("snapshot_entries").asDouble());
        assertTrue(text.toString().contains("authenticated / unauthenticated, same run:"), text.toString());
    }
}
