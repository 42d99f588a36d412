/*
 * Prints the values of the C constants, type sizes and struct field offsets that io.orbitkv.ffm binds by hand,
 * one "name value" pair per line, as the system headers define them. CLayoutHarnessTest compiles and runs this
 * program and compares every line with the Java side, so a wrong hand-copied value fails the build.
 *
 * To check a new binding, add a line here with the Java name it must match:
 *   CONSTANT(MACRO)                   -> LibC.MACRO or Errno.MACRO
 *   SIZEOF(C_LAYOUT, type)            -> LibC.C_LAYOUT.byteSize()
 *   STRUCT_SIZEOF(JavaClass, type)    -> JavaClass.sizeof(), a jextract-style struct class in io.orbitkv.ffm
 *   OFFSETOF(JavaClass, field, type)  -> JavaClass.field$offset()
 * Every int/long constant and C_* layout LibC and Errno declare must be printed here; the test checks that too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CONSTANT(macro) printf("const %s %lld\n", #macro, (long long)(macro))
#define SIZEOF(layout, type) printf("sizeof %s %zu\n", #layout, sizeof(type))
#define STRUCT_SIZEOF(java, type) printf("sizeof %s %zu\n", #java, sizeof(type))
#define OFFSETOF(java, field, type) printf("offsetof %s.%s %zu\n", #java, #field, offsetof(type, field))

int main(void)
{
    SIZEOF(C_CHAR, char);
    SIZEOF(C_INT, int);
    SIZEOF(C_LONG, long);
    SIZEOF(C_SIZE_T, size_t);
    SIZEOF(C_OFF_T, off_t);
    SIZEOF(C_PID_T, pid_t);
    SIZEOF(C_MODE_T, mode_t);
    SIZEOF(C_POINTER, void *);

    /* The harness's own fixture (src/test/java), standing in for the io_uring structs to come. */
    STRUCT_SIZEOF(TimespecFixture, struct timespec);
    OFFSETOF(TimespecFixture, tv_sec, struct timespec);
    OFFSETOF(TimespecFixture, tv_nsec, struct timespec);

    CONSTANT(PROT_NONE);
    CONSTANT(PROT_READ);
    CONSTANT(PROT_WRITE);
    CONSTANT(MAP_SHARED);
    CONSTANT(MAP_PRIVATE);
    CONSTANT(MAP_FIXED);
    CONSTANT(MAP_ANONYMOUS);
    CONSTANT(MAP_NORESERVE);
    CONSTANT(MAP_POPULATE);
    CONSTANT(MAP_HUGETLB);
    CONSTANT(MAP_FIXED_NOREPLACE);
    CONSTANT(MAP_FAILED);
    CONSTANT(MADV_NORMAL);
    CONSTANT(MADV_WILLNEED);
    CONSTANT(MADV_DONTNEED);
    CONSTANT(MADV_HUGEPAGE);
    CONSTANT(MADV_NOHUGEPAGE);
    CONSTANT(MADV_POPULATE_WRITE);

    CONSTANT(O_RDONLY);
    CONSTANT(O_WRONLY);
    CONSTANT(O_RDWR);
    CONSTANT(O_CREAT);
    CONSTANT(O_EXCL);
    CONSTANT(O_TRUNC);
    CONSTANT(O_DSYNC);
    CONSTANT(O_DIRECT);
    CONSTANT(O_DIRECTORY);
    CONSTANT(O_CLOEXEC);
    CONSTANT(FALLOC_FL_KEEP_SIZE);
    CONSTANT(FALLOC_FL_PUNCH_HOLE);

    printf("const SYS_IO_URING_SETUP %lld\n", (long long)SYS_io_uring_setup);
    printf("const SYS_IO_URING_ENTER %lld\n", (long long)SYS_io_uring_enter);
    printf("const SYS_IO_URING_REGISTER %lld\n", (long long)SYS_io_uring_register);

    CONSTANT(EPERM);
    CONSTANT(ENOENT);
    CONSTANT(EINTR);
    CONSTANT(EIO);
    CONSTANT(EBADF);
    CONSTANT(EAGAIN);
    CONSTANT(ENOMEM);
    CONSTANT(EACCES);
    CONSTANT(EFAULT);
    CONSTANT(EBUSY);
    CONSTANT(EEXIST);
    CONSTANT(ENODEV);
    CONSTANT(EINVAL);
    CONSTANT(EMFILE);
    CONSTANT(EFBIG);
    CONSTANT(ENOSPC);
    CONSTANT(ENOSYS);
    CONSTANT(EOPNOTSUPP);

    return 0;
}
