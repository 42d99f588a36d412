package io.orbitkv.ffm;

/**
 * Linux {@code errno} values ({@code <errno.h>}, identical on x86_64 and aarch64) and the formatting of
 * failures for error paths. Formatting allocates; only call it once a call has failed.
 */
public final class Errno
{
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int EMFILE = 24;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int ETIME = 62;
    public static final int EPROTO = 71;
    public static final int EOPNOTSUPP = 95;

    private Errno()
    {
    }

    /**
     * The symbolic name of an {@code errno} value, for messages that operators grep for.
     *
     * @param errno value captured after a failed call.
     * @return the macro name, or {@code "errno"} when the value is not one this class names.
     */
    public static String name(final int errno)
    {
        return switch (errno)
        {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case EMFILE -> "EMFILE";
            case EFBIG -> "EFBIG";
            case ENOSPC -> "ENOSPC";
            case ENOSYS -> "ENOSYS";
            case ETIME -> "ETIME";
            case EPROTO -> "EPROTO";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            default -> "errno";
        };
    }

    /**
     * Render an {@code errno} as {@code "EBADF(9) Bad file descriptor"}, the text coming from libc's
     * {@code strerror} so that it matches what C tools print for the same failure.
     *
     * @param errno value captured after a failed call.
     * @return name, number and libc's description.
     */
    public static String describe(final int errno)
    {
        return name(errno) + '(' + errno + ") " + LibC.strerrorString(errno);
    }
}
