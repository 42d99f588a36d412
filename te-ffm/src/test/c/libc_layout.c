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
 *   OFFSETOF_AS(JavaClass, javaField, type, cField) when the Java name differs from the C member
 * Every int/long constant and C_* layout LibC, Errno and IoUringConstants declare, and every sizeof()/field$offset()
 * of the io_uring struct classes, must be printed here; the test checks that too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/io_uring.h>
#include <linux/time_types.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CONSTANT(macro) printf("const %s %lld\n", #macro, (long long)(macro))
#define SIZEOF(layout, type) printf("sizeof %s %zu\n", #layout, sizeof(type))
#define STRUCT_SIZEOF(java, type) printf("sizeof %s %zu\n", #java, sizeof(type))
#define OFFSETOF(java, field, type) printf("offsetof %s.%s %zu\n", #java, #field, offsetof(type, field))
#define OFFSETOF_AS(java, field, type, member) \
    printf("offsetof %s.%s %zu\n", #java, #field, offsetof(type, member))

/* Kernel 6.5 renamed the ring offsets' resv2 to user_addr (for IORING_SETUP_NO_MMAP, added at the same time). */
#ifdef IORING_SETUP_NO_MMAP
#define RING_USER_ADDR user_addr
#else
#define RING_USER_ADDR resv2
#endif

/* Kernel 6.12 turned io_uring_getevents_arg's pad into min_wait_usec (with IORING_FEAT_MIN_TIMEOUT). */
#ifdef IORING_FEAT_MIN_TIMEOUT
#define GETEVENTS_MIN_WAIT min_wait_usec
#else
#define GETEVENTS_MIN_WAIT pad
#endif

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

    STRUCT_SIZEOF(IoSqringOffsets, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, head, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, tail, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, ring_mask, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, ring_entries, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, flags, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, dropped, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, array, struct io_sqring_offsets);
    OFFSETOF(IoSqringOffsets, resv1, struct io_sqring_offsets);
    OFFSETOF_AS(IoSqringOffsets, user_addr, struct io_sqring_offsets, RING_USER_ADDR);

    STRUCT_SIZEOF(IoCqringOffsets, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, head, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, tail, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, ring_mask, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, ring_entries, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, overflow, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, cqes, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, flags, struct io_cqring_offsets);
    OFFSETOF(IoCqringOffsets, resv1, struct io_cqring_offsets);
    OFFSETOF_AS(IoCqringOffsets, user_addr, struct io_cqring_offsets, RING_USER_ADDR);

    STRUCT_SIZEOF(IoUringParams, struct io_uring_params);
    OFFSETOF(IoUringParams, sq_entries, struct io_uring_params);
    OFFSETOF(IoUringParams, cq_entries, struct io_uring_params);
    OFFSETOF(IoUringParams, flags, struct io_uring_params);
    OFFSETOF(IoUringParams, sq_thread_cpu, struct io_uring_params);
    OFFSETOF(IoUringParams, sq_thread_idle, struct io_uring_params);
    OFFSETOF(IoUringParams, features, struct io_uring_params);
    OFFSETOF(IoUringParams, wq_fd, struct io_uring_params);
    OFFSETOF(IoUringParams, resv, struct io_uring_params);
    OFFSETOF(IoUringParams, sq_off, struct io_uring_params);
    OFFSETOF(IoUringParams, cq_off, struct io_uring_params);

    STRUCT_SIZEOF(IoUringSqe, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, opcode, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, flags, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, ioprio, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, fd, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, off, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, addr2, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, addr, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, len, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, rw_flags, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, fsync_flags, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, user_data, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, buf_index, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, buf_group, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, personality, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, file_index, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, splice_fd_in, struct io_uring_sqe);
    OFFSETOF(IoUringSqe, addr3, struct io_uring_sqe);
    OFFSETOF_AS(IoUringSqe, pad2, struct io_uring_sqe, __pad2);

    STRUCT_SIZEOF(IoUringCqe, struct io_uring_cqe);
    OFFSETOF(IoUringCqe, user_data, struct io_uring_cqe);
    OFFSETOF(IoUringCqe, res, struct io_uring_cqe);
    OFFSETOF(IoUringCqe, flags, struct io_uring_cqe);

    STRUCT_SIZEOF(IoUringGeteventsArg, struct io_uring_getevents_arg);
    OFFSETOF(IoUringGeteventsArg, sigmask, struct io_uring_getevents_arg);
    OFFSETOF(IoUringGeteventsArg, sigmask_sz, struct io_uring_getevents_arg);
    OFFSETOF_AS(IoUringGeteventsArg, min_wait_usec, struct io_uring_getevents_arg, GETEVENTS_MIN_WAIT);
    OFFSETOF(IoUringGeteventsArg, ts, struct io_uring_getevents_arg);

    STRUCT_SIZEOF(KernelTimespec, struct __kernel_timespec);
    OFFSETOF(KernelTimespec, tv_sec, struct __kernel_timespec);
    OFFSETOF(KernelTimespec, tv_nsec, struct __kernel_timespec);

    STRUCT_SIZEOF(EpollEvent, struct epoll_event);
    OFFSETOF(EpollEvent, events, struct epoll_event);
    OFFSETOF(EpollEvent, data, struct epoll_event);

    STRUCT_SIZEOF(Iovec, struct iovec);
    OFFSETOF(Iovec, iov_base, struct iovec);
    OFFSETOF(Iovec, iov_len, struct iovec);
    STRUCT_SIZEOF(MsgHdr, struct msghdr);
    OFFSETOF(MsgHdr, msg_iov, struct msghdr);
    OFFSETOF(MsgHdr, msg_iovlen, struct msghdr);

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
    CONSTANT(PR_SET_TIMERSLACK);
    CONSTANT(PR_GET_TIMERSLACK);
    CONSTANT(PRIO_PROCESS);
    CONSTANT(EPOLL_CLOEXEC);
    CONSTANT(EPOLL_CTL_ADD);
    CONSTANT(EPOLL_CTL_DEL);
    CONSTANT(EPOLLIN);
    CONSTANT(EPOLL_CTL_MOD);
    CONSTANT(EPOLLOUT);
    CONSTANT(EPOLLERR);
    CONSTANT(EPOLLHUP);
    CONSTANT(EPOLLRDHUP);
    CONSTANT(EFD_NONBLOCK);
    CONSTANT(EFD_CLOEXEC);
    CONSTANT(MSG_DONTWAIT);
    CONSTANT(MSG_NOSIGNAL);
    /* Bit 31: Java holds it in an int, so compare it as one. */
    printf("const EPOLLET %lld\n", (long long)(int)EPOLLET);

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
    CONSTANT(O_NONBLOCK);
    CONSTANT(FALLOC_FL_KEEP_SIZE);
    CONSTANT(FALLOC_FL_PUNCH_HOLE);

    printf("const SYS_IO_URING_SETUP %lld\n", (long long)SYS_io_uring_setup);
    printf("const SYS_IO_URING_ENTER %lld\n", (long long)SYS_io_uring_enter);
    printf("const SYS_IO_URING_REGISTER %lld\n", (long long)SYS_io_uring_register);

    CONSTANT(IORING_OP_NOP);
    CONSTANT(IORING_OP_READV);
    CONSTANT(IORING_OP_WRITEV);
    CONSTANT(IORING_OP_FSYNC);
    CONSTANT(IORING_OP_READ_FIXED);
    CONSTANT(IORING_OP_WRITE_FIXED);
    CONSTANT(IORING_OP_READ);
    CONSTANT(IORING_OP_WRITE);
    CONSTANT(IORING_SETUP_IOPOLL);
    CONSTANT(IORING_SETUP_SQPOLL);
    CONSTANT(IORING_SETUP_SQ_AFF);
    CONSTANT(IORING_SETUP_CQSIZE);
    CONSTANT(IORING_SETUP_CLAMP);
    CONSTANT(IORING_SETUP_SUBMIT_ALL);
    CONSTANT(IORING_SETUP_COOP_TASKRUN);
    CONSTANT(IORING_SETUP_TASKRUN_FLAG);
    CONSTANT(IORING_SETUP_SQE128);
    CONSTANT(IORING_SETUP_CQE32);
    CONSTANT(IORING_SETUP_SINGLE_ISSUER);
    CONSTANT(IORING_SETUP_DEFER_TASKRUN);
    CONSTANT(IORING_ENTER_GETEVENTS);
    CONSTANT(IORING_ENTER_SQ_WAKEUP);
    CONSTANT(IORING_ENTER_SQ_WAIT);
    CONSTANT(IORING_ENTER_EXT_ARG);
    CONSTANT(IORING_REGISTER_BUFFERS);
    CONSTANT(IORING_UNREGISTER_BUFFERS);
    CONSTANT(IORING_REGISTER_FILES);
    CONSTANT(IORING_UNREGISTER_FILES);
    CONSTANT(IORING_FEAT_SINGLE_MMAP);
    CONSTANT(IORING_FEAT_NODROP);
    CONSTANT(IORING_FEAT_SUBMIT_STABLE);
    CONSTANT(IORING_FEAT_EXT_ARG);
    CONSTANT(IORING_OFF_SQ_RING);
    CONSTANT(IORING_OFF_CQ_RING);
    CONSTANT(IORING_OFF_SQES);
    CONSTANT(IORING_SQ_NEED_WAKEUP);
    CONSTANT(IORING_SQ_CQ_OVERFLOW);
    CONSTANT(IORING_SQ_TASKRUN);
    CONSTANT(IOSQE_FIXED_FILE);
    CONSTANT(IOSQE_IO_DRAIN);
    CONSTANT(IOSQE_IO_LINK);
    CONSTANT(IOSQE_IO_HARDLINK);
    CONSTANT(IOSQE_ASYNC);
    CONSTANT(IOSQE_BUFFER_SELECT);
    CONSTANT(IOSQE_CQE_SKIP_SUCCESS);
    CONSTANT(IORING_FSYNC_DATASYNC);

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
    CONSTANT(ETIME);
    CONSTANT(EPROTO);
    CONSTANT(EOPNOTSUPP);

    return 0;
}
