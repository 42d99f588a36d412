package io.orbitkv.clients;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C and Python clients run as another uid ({@code nobody}, through {@code setpriv}, which needs root) against a
 * real Manager process: refused at once with the reason and the way out when the Manager's files are its user's
 * only, and attached through {@code --engine-group} when the engine's group is named. Skipped where that uid cannot
 * be taken or cannot reach the built client.
 */
final class OtherUserAttachTest
{
    private static final String SETPRIV = "/usr/bin/setpriv";
    private static final String OTHER_UID = "65534";
    private static final String OTHER_GROUP = "nogroup";
    private static final String SYSTEM_PYTHON = "/usr/bin/python3";
    private static final long PROCESS_TIMEOUT_MS = 60_000;
    private static final String TOOL = System.getProperty("orbitkv.c.tool", "target/bin/okv-tool");
    private static final String LIB = System.getProperty("orbitkv.c.lib", "target/lib/liborbitkv.so");
    private static final Path PYTHON_DIR = Paths.get(System.getProperty("orbitkv.python.dir", "../python"));

    @BeforeAll
    static void requireAnotherUid() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")) && new File(SETPRIV).canExecute(),
            "needs root and " + SETPRIV);
        // okv-tool without arguments prints its usage and exits 2: the other uid can run the built client.
        final Run usage = asOtherUid(List.of(Paths.get(TOOL).toAbsolutePath().toString()));
        Assumptions.assumeTrue(2 == usage.exit, "uid " + OTHER_UID + " cannot run " + TOOL + ": " + usage.output);
    }

    @Test
    void shouldRefuseAnotherUidAtOnceNamingTheReasonInCAndPython() throws Exception
    {
        try (ManagerProcess manager = ManagerProcess.start("--pool-bytes", "16m"))
        {
            final String dir = reachable(manager);
            final Run c = asOtherUid(tool(dir, "publish", "other-uid", "1", "2", "4096"));
            assertNotEquals(0, c.exit, c.output);
            // The attach timeout is 10 s; waiting it out would end in "no Manager ready" instead of this text.
            assertTrue(c.output.contains("permission denied on " + dir + "/cnc.dat"), c.output);
            assertTrue(c.output.contains("--engine-group"), c.output);

            // The system Python: an interpreter under root's home (pyenv) is not this uid's to run.
            Assumptions.assumeTrue(new File(SYSTEM_PYTHON).canExecute(), "no " + SYSTEM_PYTHON);
            final Run python = asOtherUid(List.of(SYSTEM_PYTHON, "-c",
                "import sys, orbitkv\n" +
                "try:\n" +
                "    orbitkv.Client(dir=sys.argv[1], name='other', data_region_bytes=4096, attach_timeout_ms=30000)\n" +
                "except orbitkv.OrbitKVError as e:\n" +
                "    print('refused:', e)\n" +
                "    sys.exit(3)\n", dir));
            assertEquals(3, python.exit, python.output);
            assertTrue(python.output.contains("permission denied on " + dir + "/cnc.dat"), python.output);
            assertTrue(manager.isAlive(), manager.output());
        }
    }

    @Test
    void shouldLetAMemberOfTheEngineGroupPublishFromC() throws Exception
    {
        try (ManagerProcess manager = ManagerProcess.start("--pool-bytes", "16m", "--engine-group", OTHER_GROUP))
        {
            final String dir = reachable(manager);
            final Run c = asOtherUid(tool(dir, "publish", "other-group", "2", "2", "4096"));
            assertEquals(0, c.exit, c.output);
            assertTrue(c.output.contains("op=publish status=0 stored=2"), c.output);
        }
    }

    /**
     * The Manager's directory once its cnc file is there, its parent opened to others so that only the Manager's
     * own modes decide.
     */
    private static String reachable(final ManagerProcess manager) throws Exception
    {
        final Path dir = Paths.get(manager.dir());
        Files.setPosixFilePermissions(dir.getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(dir.resolve("cnc.dat")))
        {
            assertTrue(manager.isAlive(), manager.output());
            assertTrue(System.nanoTime() - deadlineNs < 0, "no cnc.dat in " + dir + ": " + manager.output());
            Thread.sleep(20);
        }
        return dir.toString();
    }

    private static List<String> tool(final String dir, final String... args)
    {
        final List<String> command = new ArrayList<>(List.of(Paths.get(TOOL).toAbsolutePath().toString(), dir));
        command.addAll(List.of(args));
        return command;
    }

    private record Run(int exit, String output)
    {
    }

    private static Run asOtherUid(final List<String> command) throws IOException, InterruptedException
    {
        final List<String> full = new ArrayList<>(List.of(SETPRIV, "--reuid=" + OTHER_UID, "--regid=" + OTHER_GROUP,
            "--clear-groups"));
        full.addAll(command);
        final ProcessBuilder builder = new ProcessBuilder(full).redirectErrorStream(true).directory(new File("/tmp"));
        builder.environment().put("ORBITKV_LIB", Paths.get(LIB).toAbsolutePath().toString());
        builder.environment().put("PYTHONPATH", PYTHON_DIR.toAbsolutePath().normalize().toString());
        builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        final Process process = builder.start();
        final byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(PROCESS_TIMEOUT_MS, TimeUnit.MILLISECONDS))
        {
            process.destroyForcibly();
            return new Run(-1, "timed out: " + new String(output, StandardCharsets.UTF_8));
        }
        return new Run(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }
}
