/*
 * What a write into a shared tmpfs mapping costs the first time a process touches the pages, against the same copy
 * once they are mapped and a copy into anonymous memory: the cost an engine pays writing into pool slots it never
 * touched (zero-copy saves). One file of 256 MiB in /dev/shm, mapped twice (as the Manager and as the engine); the
 * first mapping populates the pages, the second copies 2 MiB blocks into them.
 *
 *   gcc -O2 -o /tmp/shm_fault_probe benches/tools/shm_fault_probe.c && /tmp/shm_fault_probe
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
    const size_t bytes = 256u << 20, block = 2u << 20;
    const int fd = open("/dev/shm/orbitkv-shm-fault-probe", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0)
    {
        perror("probe file");
        return 1;
    }
    char *manager = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *engine = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *anonymous = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *src = malloc(block);
    if (manager == MAP_FAILED || engine == MAP_FAILED || anonymous == MAP_FAILED || src == NULL)
    {
        perror("mmap");
        return 1;
    }
    madvise(manager, bytes, MADV_POPULATE_WRITE);
    memset(anonymous, 1, bytes);
    memset(src, 7, block);
    const int blocks = (int)(bytes / 2 / block);
    const double t0 = now_ns();
    for (size_t o = 0; o < bytes / 2; o += block)
    {
        memcpy(engine + o, src, block);
    }
    const double t1 = now_ns();
    for (size_t o = bytes / 2; o < bytes; o += block)
    {
        madvise(engine + o, block, MADV_POPULATE_WRITE);
        memcpy(engine + o, src, block);
    }
    const double t2 = now_ns();
    for (size_t o = 0; o < bytes / 2; o += block)
    {
        memcpy(engine + o, src, block);
    }
    const double t3 = now_ns();
    for (size_t o = 0; o < bytes / 2; o += block)
    {
        memcpy(anonymous + o, src, block);
    }
    const double t4 = now_ns();
    printf("per 2 MiB block: faulting copy %.0f us, populate then copy %.0f us, mapped copy %.0f us, "
        "anonymous copy %.0f us\n", (t1 - t0) / blocks / 1e3, (t2 - t1) / blocks / 1e3, (t3 - t2) / blocks / 1e3,
        (t4 - t3) / blocks / 1e3);
    unlink("/dev/shm/orbitkv-shm-fault-probe");
    return 0;
}
