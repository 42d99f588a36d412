package io.orbitkv.manager.store;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which mounts give data regions 2 MiB pages, from mount tables as {@code /proc/self/mountinfo} writes them.
 */
class DataRegionPagesTest
{
    private static final String SHMEM_NEVER = "always within_size advise [never] deny force\n";
    private static final List<String> MOUNTS = List.of(
        "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard",
        "25 22 0:22 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683772k",
        "40 22 0:40 / /run/orbitkv rw,relatime shared:9 - tmpfs tmpfs rw,size=8388608k,huge=within_size",
        "41 40 0:41 / /run/orbitkv/small rw,relatime - tmpfs tmpfs rw,size=1024k",
        "42 22 0:42 / /mnt/huge\\040pages rw - tmpfs tmpfs rw,huge=always",
        "43 22 0:43 / /mnt/advise rw - tmpfs tmpfs rw,huge=advise",
        "44 25 0:44 / /dev/shm rw - tmpfs tmpfs rw,huge=always");

    @Test
    void shouldFindHugePagesOnlyOnTmpfsMountedHugeAlwaysOrWithinSize()
    {
        assertTrue(verdict("/run/orbitkv/a/clients").huge());
        assertTrue(verdict("/run/orbitkv/a/clients").reason().contains("huge=within_size"));
        assertTrue(verdict("/mnt/huge pages/clients").huge(), "an escaped mount point");
        assertFalse(verdict("/mnt/advise/clients").huge(), "advise needs madvise on every mapping");
        assertFalse(verdict("/work/orbitkv/clients").huge(), "ext4");
        assertTrue(verdict("/work/orbitkv/clients").reason().contains("ext4 at /"));
    }

    @Test
    void shouldTakeTheLongestAndLatestMountHoldingTheDirectory()
    {
        assertFalse(verdict("/run/orbitkv/small/clients").huge(), "a mount inside the huge one");
        assertFalse(verdict("/run/orbitkvx/clients").huge(), "a sibling whose name extends the mount point");
        assertTrue(verdict("/dev/shm/orbitkv/clients").huge(), "mounted over the first /dev/shm");
        assertFalse(DataRegionPages.of(Path.of("/dev/shm/x"), MOUNTS.subList(0, 2), SHMEM_NEVER).huge());
    }

    @Test
    void shouldFollowForcedShmemHugePagesOnAnyTmpfs()
    {
        final String forced = "always within_size advise never deny [force]\n";
        assertTrue(DataRegionPages.of(Path.of("/dev/shm/x"), MOUNTS.subList(0, 2), forced).huge());
        assertFalse(DataRegionPages.of(Path.of("/work/x"), MOUNTS.subList(0, 2), forced).huge(), "not tmpfs");
    }

    @Test
    void shouldAnswerFourKibPagesForAMountTableItCannotRead()
    {
        final DataRegionPages.Verdict none = DataRegionPages.of(Path.of("/x"), List.of("garbage", ""), SHMEM_NEVER);
        assertFalse(none.huge());
        assertEquals("no mount found for /x", none.reason());
    }

    private static DataRegionPages.Verdict verdict(final String dir)
    {
        return DataRegionPages.of(Path.of(dir), MOUNTS, SHMEM_NEVER);
    }
}
