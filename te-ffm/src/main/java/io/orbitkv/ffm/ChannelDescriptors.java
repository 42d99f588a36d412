package io.orbitkv.ffm;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.SelectableChannel;

/**
 * The file descriptor under a JDK channel, for native calls on sockets the JDK opened (epoll on a media driver's
 * datagram socket). The JDK keeps it behind {@code sun.nio.ch.SelChImpl}, reachable only when the JVM runs with
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} (the project's JVM flags carry it); without it every
 * lookup answers -1 and callers fall back to what they did without the descriptor.
 */
public final class ChannelDescriptors
{
    private static final MethodHandle GET_FD_VAL = lookup();

    private ChannelDescriptors()
    {
    }

    /**
     * @return true when descriptors can be read (the export is in place).
     */
    public static boolean available()
    {
        return null != GET_FD_VAL;
    }

    /**
     * @param channel an open channel of the default provider.
     * @return its file descriptor, or -1 when unavailable (no export, another provider, or closed).
     */
    public static int fdOf(final SelectableChannel channel)
    {
        if (null == GET_FD_VAL || null == channel || !channel.isOpen())
        {
            return -1;
        }
        try
        {
            return (int)GET_FD_VAL.invoke(channel);
        }
        catch (final Throwable ex)
        {
            return -1;
        }
    }

    private static MethodHandle lookup()
    {
        try
        {
            final Class<?> selChImpl = Class.forName("sun.nio.ch.SelChImpl");
            return MethodHandles.lookup().findVirtual(selChImpl, "getFDVal", MethodType.methodType(int.class));
        }
        catch (final ReflectiveOperationException | RuntimeException ex)
        {
            return null;
        }
    }
}
