package io.orbitkv.manager.authority;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.SystemCounters;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The authority log's file: every record type as written, read back by a reader that knows only the layout and by the
 * qualification harness's Python reader; the rings wrap and count what they overwrote; validity extensions are
 * coalesced without ever recording a deadline the registration did not have; earlier logs are kept; the monotonic
 * clock is the host's CLOCK_MONOTONIC; and the Python checker flags stale authority.
 */
@Timeout(60)
class AuthorityLogTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path READER = Paths.get(System.getProperty("user.dir")).getParent()
        .resolve("benches").resolve("qualify").resolve("authority.py");
    private static final long SEC = TimeUnit.SECONDS.toNanos(1);

    private final SystemCounters counters = SystemCounterFamilies.inMemory();
    private final CachedNanoClock nanoClock = new CachedNanoClock();
    private final CachedEpochClock epochClock = new CachedEpochClock();

    @TempDir
    Path dir;

    private AuthorityLog create(final Path in, final String node, final long pid)
    {
        return AuthorityLog.create(in.toFile(), AuthorityLog.MIN_BYTES, node, "c1", UUID.randomUUID(), pid,
            nanoClock, epochClock, counters);
    }

    @Test
    void shouldWriteEveryRecordTypeForAReaderThatKnowsOnlyTheLayoutAndForThePythonReader() throws Exception
    {
        final UUID own = new UUID(0x1111L, 0x2222L);
        final UUID peer = new UUID(-5L, 0x4444L);
        nanoClock.update(1_000);
        epochClock.update(1_700_000_000_000L);
        try (AuthorityLog log = create(dir, "node-a", 42))
        {
            log.registered(1, 7, own.getMostSignificantBits(), own.getLeastSignificantBits(), 0xABCL, 10, 5 * SEC, 0);
            nanoClock.update(2_000);
            log.validity(1, 7, own.getMostSignificantBits(), own.getLeastSignificantBits(), 9 * SEC, 4 * SEC);
            log.granted(1, 7, own.getMostSignificantBits(), own.getLeastSignificantBits(), 2_500, 9 * SEC,
                peer.getMostSignificantBits(), peer.getLeastSignificantBits(), 17, 23, 3, 49_152);
            nanoClock.update(3_000);
            log.accepted(1, 7, own.getMostSignificantBits(), own.getLeastSignificantBits(),
                peer.getMostSignificantBits(), peer.getLeastSignificantBits(), 31, 37, 2, 16_384);
            nanoClock.update(4_000);
            log.fenced(1, 7, own.getMostSignificantBits(), own.getLeastSignificantBits(), 1, 9 * SEC);
            nanoClock.update(5_000);
            log.closing(1, 7, own.getMostSignificantBits(), own.getLeastSignificantBits(), 9 * SEC);
        }

        final Path file = dir.resolve(AuthorityLogDescriptor.FILE_NAME);
        final AuthorityLogReader read = AuthorityLogReader.read(file);
        assertEquals(42, read.pid);
        assertEquals("node-a", read.nodeId);
        assertEquals("c1", read.cluster);
        assertEquals(4, read.position[AuthorityLogDescriptor.MEMBERSHIP_SECTION]);
        assertEquals(2, read.position[AuthorityLogDescriptor.AGENT_SECTION]);
        final AuthorityLogReader.Record registered = read.ofType(AuthorityLogDescriptor.REGISTERED).get(0);
        assertEquals(1_000, registered.monoNs());
        assertEquals(1_700_000_000_000L, registered.wallMs());
        assertEquals(7, registered.epoch());
        assertEquals(own, new UUID(registered.uuidMsb(), registered.uuidLsb()));
        assertEquals(List.of(0xABCL, 10L, 5 * SEC, 0L), head(registered.fields(), 4));
        final AuthorityLogReader.Record grant = read.ofType(AuthorityLogDescriptor.GRANT).get(0);
        assertEquals(2_500, grant.monoNs(), "a grant's time is the time it was decided at");
        assertEquals(List.of(-5L, 0x4444L, 17L, 23L, 9 * SEC, 3L, 49_152L), head(grant.fields(), 7));
        final AuthorityLogReader.Record accepted = read.ofType(AuthorityLogDescriptor.FETCH_ACCEPTED).get(0);
        assertEquals(List.of(-5L, 0x4444L, 31L, 37L, 2L, 16_384L), head(accepted.fields(), 6));
        assertEquals(List.of(1L, 9 * SEC), head(read.ofType(AuthorityLogDescriptor.FENCED).get(0).fields(), 2));
        assertEquals(1, read.ofType(AuthorityLogDescriptor.CLOSING).size());
        assertEquals(6, counters.get(AuthorityCounter.RECORDS).get());
        assertEquals(1, counters.get(AuthorityCounter.GRANTS).get());
        assertEquals(1, counters.get(AuthorityCounter.ACCEPTS).get());

        final JsonNode py = JSON.readTree(python(file.toString()).trim());
        assertEquals("node-a", py.get("nodeId").asText());
        assertEquals(42, py.get("pid").asLong());
        final List<String> types = new ArrayList<>();
        py.get("records").forEach((r) -> types.add(r.get("type").asText()));
        assertEquals(List.of("REGISTERED", "VALIDITY", "FENCED", "CLOSING", "GRANT", "FETCH_ACCEPTED"), types);
        final JsonNode pyGrant = py.get("records").get(4);
        assertEquals(own.toString(), pyGrant.get("uuid").asText());
        assertEquals(peer.toString(), pyGrant.get("requester").asText());
        assertEquals(23, pyGrant.get("transferSessionId").asLong());
        assertEquals(9 * SEC, pyGrant.get("validUntilNs").asLong());
        assertEquals(2_500, pyGrant.get("monoNs").asLong());
        assertEquals(peer.toString(), py.get("records").get(5).get("source").asText());
    }

    @Test
    void shouldWrapOverTheOldestRecordsAndCountThem() throws Exception
    {
        final long capacity;
        final long extra = 10;
        try (AuthorityLog log = create(dir, "a", 1))
        {
            capacity = log.capacity(AuthorityLogDescriptor.AGENT_SECTION);
            for (long i = 0; i < capacity + extra; i++)
            {
                log.granted(1, 1, 1, 1, i, i + 1, 2, 2, i, i, 1, 1);
            }
        }
        assertEquals(extra, counters.get(AuthorityCounter.OVERWRITTEN).get());
        assertEquals(capacity + extra, counters.get(AuthorityCounter.RECORDS).get());

        final AuthorityLogReader read = AuthorityLogReader.read(dir.resolve(AuthorityLogDescriptor.FILE_NAME));
        final List<AuthorityLogReader.Record> grants = read.ofType(AuthorityLogDescriptor.GRANT);
        assertEquals(capacity, grants.size());
        assertEquals(extra, grants.get(0).index(), "the oldest left is the first not overwritten");
        assertEquals(extra, grants.get(0).fields()[3]);
        assertEquals(capacity + extra - 1, grants.get(grants.size() - 1).fields()[3]);

        final JsonNode py = JSON.readTree(python(dir.resolve(AuthorityLogDescriptor.FILE_NAME).toString()).trim());
        assertEquals(capacity, py.get("records").size());
        assertEquals(extra, py.get("sections").get(AuthorityLogDescriptor.AGENT_SECTION).get("overwritten").asLong());
        assertEquals(extra, py.get("records").get(0).get("transferSessionId").asLong());
    }

    @Test
    void shouldCoalesceValidityExtensionsWithoutRecordingADeadlineTheRegistrationDidNotHave() throws Exception
    {
        final long halfTtl = 5 * SEC;
        final long interval = 10 * SEC / 6;
        final List<Long> real = new ArrayList<>();
        final List<Long> lastRecordedLag = new ArrayList<>();
        try (AuthorityLog log = create(dir, "a", 1))
        {
            nanoClock.update(0);
            log.registered(1, 1, 1, 1, 1, 10, halfTtl, 0);
            real.add(halfTtl);
            for (int k = 1; k <= 60; k++)
            {
                final long sentNs = k * interval;
                nanoClock.update(sentNs + 20_000_000L);
                real.add(sentNs + halfTtl);
                log.validity(1, 1, 1, 1, sentNs + halfTtl, sentNs);
                final List<AuthorityLogReader.Record> written =
                    AuthorityLogReader.read(log.file().toPath()).ofType(AuthorityLogDescriptor.VALIDITY);
                final long lastWritten = written.isEmpty() ? halfTtl : written.get(written.size() - 1).fields()[0];
                lastRecordedLag.add(sentNs + halfTtl - lastWritten);
            }
        }
        final List<AuthorityLogReader.Record> written =
            AuthorityLogReader.read(dir.resolve(AuthorityLogDescriptor.FILE_NAME)).ofType(AuthorityLogDescriptor.VALIDITY);
        for (final AuthorityLogReader.Record r : written)
        {
            assertTrue(real.contains(r.fields()[0]), "only deadlines the registration had: " + r.fields()[0]);
        }
        assertEquals(60, written.size() + counters.get(AuthorityCounter.VALIDITY_COALESCED).get());
        assertTrue(written.size() <= 31, "about every other extension with keepalives every TTL/6: " + written.size());
        assertTrue(counters.get(AuthorityCounter.VALIDITY_COALESCED).get() >= 29);
        for (final long lag : lastRecordedLag)
        {
            assertTrue(lag >= 0 && lag < AuthorityLog.VALIDITY_COALESCE_NS, "recorded deadline lags the real one by " + lag);
        }
    }

    @Test
    void shouldKeepThePreviousLogsWhenAManagerStartsAgainInTheSameDirectory() throws Exception
    {
        for (int pid = 1; pid <= AuthorityLogDescriptor.KEPT_LOGS + 2; pid++)
        {
            create(dir, "a", pid).close();
        }
        final int last = AuthorityLogDescriptor.KEPT_LOGS + 2;
        assertEquals(last, AuthorityLogReader.read(dir.resolve(AuthorityLogDescriptor.FILE_NAME)).pid);
        for (int n = 1; n <= AuthorityLogDescriptor.KEPT_LOGS; n++)
        {
            assertEquals(last - n, AuthorityLogReader.read(dir.resolve(AuthorityLog.keptName(n))).pid);
        }
        assertFalse(Files.exists(dir.resolve(AuthorityLog.keptName(AuthorityLogDescriptor.KEPT_LOGS + 1))));
    }

    @Test
    void shouldUseTheHostsMonotonicClockAsTheOtherProcessesSeeIt() throws Exception
    {
        // System.nanoTime is clock_gettime(CLOCK_MONOTONIC) on Linux: another process's reading of that clock falls
        // between two readings taken here around it.
        for (int i = 0; i < 3; i++)
        {
            final long before = System.nanoTime();
            final long theirs = Long.parseLong(run("python3", "-c",
                "import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))").trim());
            final long after = System.nanoTime();
            assertTrue(before <= theirs && theirs <= after, before + " <= " + theirs + " <= " + after);
        }
    }

    @Test
    void shouldFlagGrantsAfterTheFenceOrTheDeadlineAndBytesNoGrantCovers() throws Exception
    {
        final Path a = Files.createDirectories(dir.resolve("a"));
        final Path b = Files.createDirectories(dir.resolve("b"));
        final UUID sourceUuid = UUID.randomUUID();
        final UUID requesterUuid = UUID.randomUUID();
        try (AuthorityLog source = create(a, "a", 1); AuthorityLog requester = create(b, "b", 2))
        {
            nanoClock.update(100 * SEC);
            source.registered(1, 3, sourceUuid.getMostSignificantBits(), sourceUuid.getLeastSignificantBits(), 1, 10,
                105 * SEC, 0);
            requester.registered(1, 4, requesterUuid.getMostSignificantBits(), requesterUuid.getLeastSignificantBits(),
                1, 10, 105 * SEC, 0);
            grant(source, sourceUuid, requesterUuid, 101 * SEC, 105 * SEC, 1);
            nanoClock.update(102 * SEC);
            accept(requester, requesterUuid, sourceUuid, 1);
            nanoClock.update(103 * SEC);
            source.fenced(1, 3, sourceUuid.getMostSignificantBits(), sourceUuid.getLeastSignificantBits(), 3, 105 * SEC);
        }
        JsonNode verdict = JSON.readTree(python("--check", a.toString(), b.toString()));
        assertEquals(0, verdict.get("violations").size(), verdict::toString);
        assertEquals(1, verdict.get("figures").get("grantsJudged").asInt());
        assertEquals(1, verdict.get("figures").get("acceptedJudged").asInt());

        try (AuthorityLog source = create(a, "a", 3); AuthorityLog requester = create(b, "b", 4))
        {
            final UUID second = UUID.randomUUID();
            nanoClock.update(110 * SEC);
            source.registered(1, 2, second.getMostSignificantBits(), second.getLeastSignificantBits(), 1, 10,
                115 * SEC, 0);
            nanoClock.update(111 * SEC);
            source.fenced(1, 2, second.getMostSignificantBits(), second.getLeastSignificantBits(), 1, 115 * SEC);
            grant(source, second, requesterUuid, 112 * SEC, 115 * SEC, 2);
            grant(source, second, requesterUuid, 116 * SEC, 115 * SEC, 3);
            nanoClock.update(117 * SEC);
            accept(requester, requesterUuid, second, 9);
        }
        verdict = JSON.readTree(python("--check", a.toString(), b.toString()));
        final String violations = verdict.get("violations").toString();
        assertTrue(violations.contains("after it was fenced"), violations);
        assertTrue(violations.contains("after its validity deadline"), violations);
        assertTrue(violations.contains("no grant of its log covers"), violations);
        assertTrue(violations.contains("epoch 2"), "epochs of node a went from 3 to 2: " + violations);
    }

    private static void grant(
        final AuthorityLog log, final UUID by, final UUID to, final long atNs, final long validUntilNs, final long session)
    {
        log.granted(1, 3, by.getMostSignificantBits(), by.getLeastSignificantBits(), atNs, validUntilNs,
            to.getMostSignificantBits(), to.getLeastSignificantBits(), session * 10, session, 1, 16_384);
    }

    private static void accept(final AuthorityLog log, final UUID own, final UUID from, final long session)
    {
        log.accepted(1, 4, own.getMostSignificantBits(), own.getLeastSignificantBits(), from.getMostSignificantBits(),
            from.getLeastSignificantBits(), session * 10, session, 0, 16_384);
    }

    private static List<Long> head(final long[] fields, final int n)
    {
        final List<Long> list = new ArrayList<>();
        for (int i = 0; i < n; i++)
        {
            list.add(fields[i]);
        }
        return list;
    }

    private static String python(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("python3", READER.toString()));
        command.addAll(List.of(args));
        return run(command.toArray(new String[0]));
    }

    private static String run(final String... command) throws IOException, InterruptedException
    {
        final File err = File.createTempFile("authority-py", ".err");
        try
        {
            final Process p = new ProcessBuilder(command).redirectError(err).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            final String stderr = Files.readString(err.toPath());
            assertTrue(stderr.isEmpty(), stderr);
            return out;
        }
        finally
        {
            Files.deleteIfExists(err.toPath());
        }
    }
}
