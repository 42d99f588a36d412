package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.orbitkv.client.EngineClient;
import io.orbitkv.manager.cli.ChildJvm;
import io.orbitkv.manager.cli.OrbitKvCli;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Manager's directory and the files engines map (CnC, doorbell FIFO, pool file, client data regions) are
 * owner-only unless {@code --engine-group} widens them to a group; a process of another uid cannot attach to an
 * owner-only Manager and can attach through the group. The other uid is {@code nobody} (65534, group nogroup), the
 * child runs under {@code setpriv --reuid/--regid --clear-groups}, which needs root: without it the cross-uid cases
 * are skipped (the modes are still checked).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
final class EngineFileAccessTest
{
    private static final String OTHER_UID = "65534";
    private static final String OTHER_GROUP = "nogroup";

    @Test
    void shouldKeepTheDirectoryAndSharedFilesOwnerOnlyAndRefuseAnotherUid() throws Exception
    {
        final File dir = ManagerTestSupport.newDir();
        final Manager manager = Manager.launch(ManagerTestSupport.smallContext(dir)
            .enginePoolAccess(Configuration.EnginePoolAccess.WRITE_RESERVED));
        try (EngineClient owner = attach(dir))
        {
            assertTrue(owner.clientId() != 0);
            assertModes(dir, "rwx------", "rw-------", null);

            final Run other = asOtherUid(dir);
            assumeTrue(null != other, "setpriv to uid " + OTHER_UID + " is not available here");
            assertNotEquals(0, other.exit, other.output);
            // Refused at once, naming the way out, rather than after the attach timeout as if no Manager ran.
            assertTrue(other.output.contains("permission denied on " + dir + "/cnc.dat"), other.output);
            assertTrue(other.output.contains("--engine-group"), other.output);
        }
        finally
        {
            ManagerTestSupport.closeCheckingErrors(manager, dir, false);
        }
    }

    @Test
    void shouldWidenToTheEngineGroupAndLetAMemberOfItAttach() throws Exception
    {
        final File dir = ManagerTestSupport.newDir();
        final Manager manager = Manager.launch(ManagerTestSupport.smallContext(dir)
            .enginePoolAccess(Configuration.EnginePoolAccess.WRITE_RESERVED)
            .engineGroup(OTHER_GROUP));
        try (EngineClient owner = attach(dir))
        {
            assertTrue(owner.clientId() != 0);
            assertModes(dir, "rwxr-x---", "rw-rw----", OTHER_GROUP);

            final Run other = asOtherUid(dir);
            assumeTrue(null != other, "setpriv to uid " + OTHER_UID + " is not available here");
            assertEquals(0, other.exit, other.output);
            assertTrue(other.output.contains("stored"), other.output);
        }
        finally
        {
            ManagerTestSupport.closeCheckingErrors(manager, dir, false);
        }
    }

    @Test
    void shouldRefuseAnUnknownGroupAtStart()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).engineGroup("no-such-group-orbitkv")
                .conclude());
        assertTrue(ex.getMessage().contains("--engine-group 'no-such-group-orbitkv' is not a group"), ex.getMessage());
    }

    private static EngineClient attach(final File dir)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(dir.getAbsolutePath())
            .clientName("owner")
            .dataRegionBytes(1L << 20));
    }

    private static void assertModes(final File dir, final String dirMode, final String fileMode, final String group)
        throws IOException
    {
        final List<Path> dirs = List.of(dir.toPath(), dir.toPath().resolve("clients"));
        final List<Path> files = new ArrayList<>(List.of(dir.toPath().resolve("cnc.dat"), dir.toPath().resolve("doorbell"),
            dir.toPath().resolve("pool.dat")));
        try (var regions = Files.list(dir.toPath().resolve("clients")))
        {
            final List<Path> data = regions.filter(p -> p.toString().endsWith(".data")).toList();
            assertEquals(1, data.size(), "the attached client's data region: " + data);
            files.addAll(data);
        }
        for (final Path path : dirs)
        {
            check(path, dirMode, group);
        }
        for (final Path path : files)
        {
            check(path, fileMode, group);
        }
    }

    private static void check(final Path path, final String mode, final String group) throws IOException
    {
        final PosixFileAttributes attributes =
            Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        assertEquals(mode, PosixFilePermissions.toString(attributes.permissions()), path.toString());
        if (null != group)
        {
            assertEquals(group, attributes.group().getName(), path.toString());
        }
    }

    private record Run(int exit, String output)
    {
    }

    /**
     * Publish a short chain from a JVM running as uid 65534 (group nogroup only).
     *
     * @return the exit and output, or null when this host cannot switch uid.
     */
    /**
     * The class path with every jar copied where another uid can read it: the local Maven repository is often under a
     * home directory only its owner may enter (root's here).
     */
    private static String classPathForOthers(final String classPath) throws IOException
    {
        final java.nio.file.Path jars = java.nio.file.Files.createDirectories(
            java.nio.file.Path.of("target", "other-uid-class-path").toAbsolutePath());
        final List<String> entries = new ArrayList<>();
        for (final String entry : classPath.split(File.pathSeparator))
        {
            final java.nio.file.Path path = java.nio.file.Path.of(entry);
            if (entry.endsWith(".jar") && java.nio.file.Files.isRegularFile(path))
            {
                final java.nio.file.Path copy = jars.resolve(entries.size() + "-" + path.getFileName());
                java.nio.file.Files.copy(path, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                copy.toFile().setReadable(true, false);
                entries.add(copy.toString());
            }
            else
            {
                entries.add(entry);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static Run asOtherUid(final File dir) throws IOException, InterruptedException
    {
        if (!"root".equals(System.getProperty("user.name")) || !new File("/usr/bin/setpriv").canExecute())
        {
            return null;
        }
        final List<String> command = new ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=" + OTHER_UID,
            "--regid=" + OTHER_GROUP, "--clear-groups"));
        final List<String> java = new ArrayList<>(ChildJvm.javaCommand(List.of("-Duser.home=/tmp"),
            OrbitKvCli.class.getName(), List.of("client", "--dir", dir.getAbsolutePath(), "--attach-timeout-ms", "3000",
                "--client-name", "other", "publish", "--blocks", "2", "--block-bytes", "4096")));
        final int classPath = java.indexOf("-cp") + 1;
        java.set(classPath, classPathForOthers(java.get(classPath)));
        command.addAll(java);
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).directory(new File("/tmp")).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            return new Run(-1, "timed out: " + output);
        }
        return new Run(process.exitValue(), output);
    }
}
