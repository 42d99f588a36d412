/*
 * The floor under the Manager's pool pre-touch: how long the kernel takes to populate anonymous memory with
 * MADV_POPULATE_WRITE, measured the way the Manager maps its pool (2 MiB aligned, MAP_NORESERVE, optionally
 * MADV_HUGEPAGE before the first touch).
 *
 *   gcc -O2 -o /tmp/populate benches/tools/populate.c
 *   /tmp/populate SIZE_MIB thp|nothp whole|chunked [CHUNK_KIB]
 *
 * "whole" populates the region with one call; "chunked" calls once per CHUNK_KIB (default 2048) and also reports
 * the slowest single call, which bounds how long a toucher that checks a stop flag between calls can take to stop.
 * Either way a second populate of the whole, now resident, region is timed too (repopulateMs). The last line is one
 * JSON object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HUGE_PAGE_BYTES (2UL * 1024 * 1024)

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 4)
    {
        fprintf(stderr, "usage: %s SIZE_MIB thp|nothp whole|chunked [CHUNK_KIB]\n", argv[0]);
        return 2;
    }
    const size_t bytes = (size_t)strtoul(argv[1], NULL, 10) * 1024 * 1024;
    const int thp = 0 == strcmp(argv[2], "thp");
    const int chunked = 0 == strcmp(argv[3], "chunked");
    const size_t chunk = (argc > 4 ? (size_t)strtoul(argv[4], NULL, 10) : 2048) * 1024;
    if (0 == bytes || 0 == chunk || 0 != bytes % chunk)
    {
        fprintf(stderr, "SIZE_MIB must be positive and a multiple of CHUNK_KIB\n");
        return 2;
    }

    /* Reserve one spare huge page so that the region can start on a 2 MiB boundary, as the Manager's does. */
    const size_t reserve = bytes + HUGE_PAGE_BYTES;
    char *raw = mmap(NULL, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (MAP_FAILED == raw)
    {
        fprintf(stderr, "mmap: %s\n", strerror(errno));
        return 1;
    }
    char *region = (char *)(((uintptr_t)raw + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1));
    if (thp && 0 != madvise(region, bytes, MADV_HUGEPAGE))
    {
        fprintf(stderr, "madvise(MADV_HUGEPAGE): %s\n", strerror(errno));
        return 1;
    }

    double slowest = 0;
    const double start = now_seconds();
    if (chunked)
    {
        for (size_t offset = 0; offset < bytes; offset += chunk)
        {
            const double before = now_seconds();
            if (0 != madvise(region + offset, chunk, MADV_POPULATE_WRITE))
            {
                fprintf(stderr, "madvise(MADV_POPULATE_WRITE) at %zu: %s\n", offset, strerror(errno));
                return 1;
            }
            const double took = now_seconds() - before;
            if (took > slowest)
            {
                slowest = took;
            }
        }
    }
    else if (0 != madvise(region, bytes, MADV_POPULATE_WRITE))
    {
        fprintf(stderr, "madvise(MADV_POPULATE_WRITE): %s\n", strerror(errno));
        return 1;
    }
    const double seconds = now_seconds() - start;

    /* What a toucher pays for memory that is already present, e.g. pages an engine's publish faulted in first. */
    const double again = now_seconds();
    if (0 != madvise(region, bytes, MADV_POPULATE_WRITE))
    {
        fprintf(stderr, "second madvise(MADV_POPULATE_WRITE): %s\n", strerror(errno));
        return 1;
    }
    const double repopulateSeconds = now_seconds() - again;

    /* Count how much of the region the kernel actually backed with huge pages. */
    long anonHugeKib = -1;
    FILE *smaps = fopen("/proc/self/smaps_rollup", "r");
    if (NULL != smaps)
    {
        char line[256];
        while (NULL != fgets(line, sizeof(line), smaps))
        {
            if (1 == sscanf(line, "AnonHugePages: %ld kB", &anonHugeKib))
            {
                break;
            }
        }
        fclose(smaps);
    }

    printf("{\"mib\": %zu, \"thp\": %s, \"mode\": \"%s\", \"chunkKib\": %zu, \"seconds\": %.3f, "
        "\"secondsPerGib\": %.3f, \"slowestCallMs\": %.3f, \"repopulateMs\": %.3f, \"anonHugePagesMib\": %ld}\n",
        bytes >> 20, thp ? "true" : "false", chunked ? "chunked" : "whole", chunk >> 10, seconds,
        seconds * (double)(1UL << 30) / (double)bytes, slowest * 1e3, repopulateSeconds * 1e3, anonHugeKib < 0 ? -1 : anonHugeKib / 1024);
    munmap(raw, reserve);
    return 0;
}
