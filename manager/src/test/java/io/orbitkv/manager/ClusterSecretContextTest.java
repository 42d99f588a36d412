package io.orbitkv.manager;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterSecretContextTest
{
    @TempDir
    Path dir;

    @Test
    void shouldReadTheSecretWhenTheContextIsConcludedAndRefuseABadFileEvenWithoutPeers() throws Exception
    {
        assertNull(ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).conclude().clusterSecret(),
            "no flag: the peer channel is not authenticated");

        final Path good = dir.resolve("good");
        Files.writeString(good, "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(good, PosixFilePermissions.fromString("rw-------"));
        assertNotNull(ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).clusterSecretFile(good.toString())
            .conclude().clusterSecret());

        final Path open = dir.resolve("open");
        Files.writeString(open, "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-rw----"));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).clusterSecretFile(open.toString()).conclude());
        assertTrue(ex.getMessage().contains("has mode 0660"), ex.getMessage());
    }
}
