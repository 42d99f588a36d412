package io.orbitkv.ffm;

/**
 * A libc call or system call failed. The message names the call with its significant arguments and the
 * {@code errno} in words; {@link #errno()} keeps the number for callers that decide on it.
 */
public final class NativeCallException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    /**
     * @param call  the call with its significant arguments, e.g. {@code "mmap(length=4194304)"}.
     * @param errno captured after the call failed.
     */
    public NativeCallException(final String call, final int errno)
    {
        super(call + " failed: " + Errno.describe(errno));
        this.call = call;
        this.errno = errno;
    }

    /**
     * @param call  the call with its significant arguments, e.g. {@code "mmap(length=4194304)"}.
     * @param errno captured after the call failed.
     * @param hint  what an operator can do about this failure, appended to the message.
     */
    public NativeCallException(final String call, final int errno, final String hint)
    {
        super(call + " failed: " + Errno.describe(errno) + "; " + hint);
        this.call = call;
        this.errno = errno;
    }

    /**
     * @return the call with its significant arguments.
     */
    public String call()
    {
        return call;
    }

    /**
     * @return the {@code errno} captured after the call failed.
     */
    public int errno()
    {
        return errno;
    }
}
