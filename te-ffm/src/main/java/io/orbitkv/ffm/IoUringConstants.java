package io.orbitkv.ffm;

/**
 * The macros and enum values of {@code <linux/io_uring.h>} that OrbitKV uses, under their C names so that the
 * C layout harness can compare each one with the system header. The uapi values are architecture independent
 * and only ever appended to, so they hold on every kernel that has the feature at all.
 */
public final class IoUringConstants
{
    // enum io_uring_op: the opcode byte of an SQE.
    public static final int IORING_OP_NOP = 0;
    public static final int IORING_OP_READV = 1;
    public static final int IORING_OP_WRITEV = 2;
    public static final int IORING_OP_FSYNC = 3;
    public static final int IORING_OP_READ_FIXED = 4;
    public static final int IORING_OP_WRITE_FIXED = 5;
    public static final int IORING_OP_READ = 22;
    public static final int IORING_OP_WRITE = 23;

    // io_uring_params.flags for io_uring_setup.
    public static final int IORING_SETUP_IOPOLL = 1;
    public static final int IORING_SETUP_SQPOLL = 1 << 1;
    public static final int IORING_SETUP_SQ_AFF = 1 << 2;
    public static final int IORING_SETUP_CQSIZE = 1 << 3;
    public static final int IORING_SETUP_CLAMP = 1 << 4;
    public static final int IORING_SETUP_SUBMIT_ALL = 1 << 7;
    public static final int IORING_SETUP_COOP_TASKRUN = 1 << 8;
    public static final int IORING_SETUP_TASKRUN_FLAG = 1 << 9;
    public static final int IORING_SETUP_SQE128 = 1 << 10;
    public static final int IORING_SETUP_CQE32 = 1 << 11;
    public static final int IORING_SETUP_SINGLE_ISSUER = 1 << 12;
    public static final int IORING_SETUP_DEFER_TASKRUN = 1 << 13;

    // io_uring_enter flags.
    public static final int IORING_ENTER_GETEVENTS = 1;
    public static final int IORING_ENTER_SQ_WAKEUP = 1 << 1;
    public static final int IORING_ENTER_SQ_WAIT = 1 << 2;
    public static final int IORING_ENTER_EXT_ARG = 1 << 3;

    // enum io_uring_register_op: the opcode argument of io_uring_register.
    public static final int IORING_REGISTER_BUFFERS = 0;
    public static final int IORING_UNREGISTER_BUFFERS = 1;
    public static final int IORING_REGISTER_FILES = 2;
    public static final int IORING_UNREGISTER_FILES = 3;

    // io_uring_params.features, reported by io_uring_setup.
    public static final int IORING_FEAT_SINGLE_MMAP = 1;
    public static final int IORING_FEAT_NODROP = 1 << 1;
    public static final int IORING_FEAT_SUBMIT_STABLE = 1 << 2;
    public static final int IORING_FEAT_EXT_ARG = 1 << 8;

    // mmap offsets selecting which ring region of the io_uring fd to map.
    public static final long IORING_OFF_SQ_RING = 0L;
    public static final long IORING_OFF_CQ_RING = 0x8000000L;
    public static final long IORING_OFF_SQES = 0x10000000L;

    // Flags the kernel sets in the SQ ring's flags word.
    public static final int IORING_SQ_NEED_WAKEUP = 1;
    public static final int IORING_SQ_CQ_OVERFLOW = 1 << 1;
    public static final int IORING_SQ_TASKRUN = 1 << 2;

    // io_uring_sqe.flags.
    public static final int IOSQE_FIXED_FILE = 1;
    public static final int IOSQE_IO_DRAIN = 1 << 1;
    public static final int IOSQE_IO_LINK = 1 << 2;
    public static final int IOSQE_IO_HARDLINK = 1 << 3;
    public static final int IOSQE_ASYNC = 1 << 4;
    public static final int IOSQE_BUFFER_SELECT = 1 << 5;
    public static final int IOSQE_CQE_SKIP_SUCCESS = 1 << 6;

    // io_uring_sqe.fsync_flags.
    public static final int IORING_FSYNC_DATASYNC = 1;

    private IoUringConstants()
    {
    }
}
