import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * How long LockSupport.parkNanos really sleeps on this machine, with the kernel's default timer slack and then with
 * 1 us (what the Manager's agent thread sets). Run: java --enable-native-access=ALL-UNNAMED benches/tools/ParkLatency.java
 */
public final class ParkLatency
{
    private static final int PR_SET_TIMERSLACK = 29;
    private static final int PR_GET_TIMERSLACK = 30;
    private static final int SAMPLES = 2000;

    public static void main(final String[] args) throws Throwable
    {
        final Linker linker = Linker.nativeLinker();
        final MethodHandle prctl = linker.downcallHandle(
            linker.defaultLookup().findOrThrow("prctl"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
            Linker.Option.firstVariadicArg(1));
        for (final long slackNs : new long[]{-1, 1_000})
        {
            if (slackNs > 0)
            {
                final int rc = (int)prctl.invokeExact(PR_SET_TIMERSLACK, slackNs, 0L, 0L, 0L);
                if (0 != rc)
                {
                    throw new IllegalStateException("prctl(PR_SET_TIMERSLACK) failed");
                }
            }
            final int slack = (int)prctl.invokeExact(PR_GET_TIMERSLACK, 0L, 0L, 0L, 0L);
            for (final long parkNs : new long[]{1_000, 10_000, 100_000})
            {
                final long[] slept = new long[SAMPLES];
                for (int i = 0; i < SAMPLES; i++)
                {
                    final long start = System.nanoTime();
                    LockSupport.parkNanos(parkNs);
                    slept[i] = System.nanoTime() - start;
                }
                Arrays.sort(slept);
                System.out.printf("timer slack %6d ns: parkNanos(%6d) slept p50 %6.1f us, p90 %6.1f us, p99 %6.1f us%n",
                    slack, parkNs, slept[SAMPLES / 2] / 1e3, slept[SAMPLES * 9 / 10] / 1e3,
                    slept[SAMPLES * 99 / 100] / 1e3);
            }
        }
    }
}
