package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.e2e.OrbitKvProcesses;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Malformed-frame injection against a Manager running as its own OS process: this JVM attaches like an engine and
 * writes thousands of corrupted frames (seeded mutations of valid Publish and Lookup requests, and plain noise) into the Manager's
 * request ring while a well-behaved client process works. The Manager must answer or drop each one, count it, never
 * record an internal error, and keep serving the other client byte-exact.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ManagerProcessFuzzTest
{
    private static final int FRAMES = 5_000;
    private static final long CLIENT_TIMEOUT_MS = 60_000;
    private static final String[] REJECTION_LABELS = {
        "Rejected: malformed", "Rejected: unknown template", "Rejected: schema mismatch", "Rejected: unknown client",
        "Rejected: batch too large", "Rejected: key too large", "Rejected: out of range", "Rejected: bad flags",
        "Rejected: unknown lease", "Rejected: busy", "Rejected: namespace limit"
    };

    private OrbitKvProcesses processes;

    @BeforeEach
    void setUp() throws Exception
    {
        processes = new OrbitKvProcesses();
    }

    @AfterEach
    void tearDown() throws Exception
    {
        processes.close();
    }

    @Test
    void shouldSurviveCorruptedFramesFromAnotherProcessAndKeepServingAWellBehavedClient() throws Exception
    {
        final Process manager = processes.startManager("--pool-bytes", "64m", "--max-namespaces", "4096");
        final OrbitKvProcesses.ClientRun before = processes.runClient(CLIENT_TIMEOUT_MS,
            "publish", "--namespace", "fuzz-good", "--seed", "7", "--blocks", "64", "--block-bytes", "16k");
        assertEquals(0, before.exitCode(), before::stdout);

        final SplittableRandom random = new SplittableRandom(0x5EEDL);
        long sent = 0;
        try (RawRingClient saboteur = new RawRingClient(processes.dir.resolve(CncFileDescriptor.CNC_FILE_NAME).toFile()))
        {
            saboteur.attachOrFail("saboteur", 1L << 20);
            final UnsafeBuffer frame = saboteur.frame();
            final byte[] ns = "fuzz-bad".getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < FRAMES; i++)
            {
                int length = validFrame(saboteur, frame, random, ns, i);
                switch (random.nextInt(4))
                {
                    case 0:
                        // flip a few bytes anywhere, header included
                        for (int n = 1 + random.nextInt(4); n > 0; n--)
                        {
                            frame.putByte(random.nextInt(length), (byte)random.nextInt(256));
                        }
                        break;
                    case 1:
                        length = 1 + random.nextInt(length);
                        break;
                    case 2:
                        for (int b = 0; b < length; b++)
                        {
                            frame.putByte(b, (byte)random.nextInt(256));
                        }
                        break;
                    default:
                        // an int somewhere replaced by an extreme value: counts, lengths, offsets
                        final int at = random.nextInt(Math.max(1, length - 4));
                        frame.putInt(at, random.nextBoolean() ? -1 : Integer.MAX_VALUE);
                        break;
                }
                saboteur.send(length);
                sent++;
                if (!manager.isAlive())
                {
                    break;
                }
            }
            // A well-behaved request from the saboteur still works afterwards (unless a mutation detached it).
        }

        assertTrue(manager.isAlive(), () -> "Manager died after " + processes.dump());
        final long expectedAtLeast = sent / 2;
        long rejected = 0;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        do
        {
            rejected = 0;
            for (final String label : REJECTION_LABELS)
            {
                rejected += processes.counter(label);
            }
        }
        while (rejected < expectedAtLeast && System.nanoTime() - deadlineNs < 0);
        assertTrue(rejected >= expectedAtLeast, "most corrupted frames are rejected and counted: " + rejected + " of " + sent);
        assertEquals(0, processes.counter("Errors"), () -> "no internal error from engine bytes\n" + processes.dump());

        final OrbitKvProcesses.ClientRun after = processes.runClient(CLIENT_TIMEOUT_MS,
            "read", "--namespace", "fuzz-good", "--seed", "7", "--blocks", "64", "--block-bytes", "16k");
        assertEquals(0, after.exitCode(), after::stdout);
        assertEquals(64, after.json().get("restored").asInt(), after::stdout);
        assertEquals(0, after.json().get("mismatches").asInt(), after::stdout);
    }

    private static int validFrame(
        final RawRingClient client, final UnsafeBuffer frame, final SplittableRandom random, final byte[] ns, final int i)
    {
        if (random.nextBoolean())
        {
            // publishes whose offsets/lengths the mutations push out of the 1 MiB region or past the frame
            return RawFrames.publishOne(frame, client.clientId(), client.nextCorrelationId(),
                random.nextInt(1 << 20), 1 + random.nextInt(64 * 1024), RawRingClient.hash(i), ns);
        }
        final byte[][] hashes = new byte[1 + random.nextInt(8)][];
        for (int k = 0; k < hashes.length; k++)
        {
            hashes[k] = RawRingClient.hash(i * 16 + k);
        }
        return RawFrames.lookup(frame, client.clientId(), client.nextCorrelationId(), hashes, ns);
    }
}
