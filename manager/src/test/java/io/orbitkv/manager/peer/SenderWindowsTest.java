package io.orbitkv.manager.peer;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SenderWindowsTest
{
    private static final int W = SenderWindows.WINDOW_BITS;

    @Test
    void shouldAcceptTheFirstSequenceOfANewIncarnationWhateverItIs()
    {
        final SenderWindows windows = new SenderWindows(4, 1_000);
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 2, 1_000_000, 0));
        assertEquals(SenderWindows.DUPLICATE, windows.accept(1, 2, 1_000_000, 0));
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 3, 1_000_000, 0), "another incarnation");
        assertEquals(2, windows.size());
    }

    @Test
    void shouldAcceptEachSequenceInsideTheWindowOnceAndRefuseThoseAWindowOlder()
    {
        final SenderWindows windows = new SenderWindows(4, 1_000);
        final long top = 10_000;
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, top, 0));
        // The oldest sequence still inside: top - W + 1, for every alignment of top within a word.
        for (long t = top; t < top + 130; t++)
        {
            assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, t + 1, 0));
            final long oldest = t + 1 - W + 1;
            assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, oldest, 0), "oldest inside, top " + (t + 1));
            assertEquals(SenderWindows.DUPLICATE, windows.accept(1, 1, oldest, 0));
            assertEquals(SenderWindows.TOO_OLD, windows.accept(1, 1, oldest - 1, 0), "at the edge, top " + (t + 1));
        }
    }

    @Test
    void shouldForgetEverySequenceWhenTheWindowSlidesByItsWidthOrMore()
    {
        final SenderWindows windows = new SenderWindows(4, 1_000);
        for (long s = 1; s <= W; s++)
        {
            assertEquals(SenderWindows.ACCEPTED, windows.accept(7, 7, s, 0));
        }
        assertEquals(SenderWindows.ACCEPTED, windows.accept(7, 7, 2L * W + 1, 0));
        assertEquals(SenderWindows.TOO_OLD, windows.accept(7, 7, W + 1, 0));
        assertEquals(SenderWindows.ACCEPTED, windows.accept(7, 7, W + 2, 0), "never seen, inside the slid window");
        assertEquals(SenderWindows.ACCEPTED, windows.accept(7, 7, 2L * W, 0));
        assertEquals(SenderWindows.DUPLICATE, windows.accept(7, 7, 2L * W, 0));
    }

    @Test
    void shouldAcceptGapsAndLateFramesInsideTheWindow()
    {
        final SenderWindows windows = new SenderWindows(4, 1_000);
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, 5, 0));
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, 900, 0));
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, 6, 0));
        assertEquals(SenderWindows.DUPLICATE, windows.accept(1, 1, 5, 0));
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, 899, 0));
    }

    @Test
    void shouldRecycleOnlyAWindowIdleLongEnoughWhenAllAreTaken()
    {
        final SenderWindows windows = new SenderWindows(2, 1_000);
        assertEquals(SenderWindows.ACCEPTED, windows.accept(1, 1, 1, 0));
        assertEquals(SenderWindows.ACCEPTED, windows.accept(2, 2, 1, 500));
        assertEquals(SenderWindows.NO_WINDOW, windows.accept(3, 3, 1, 999), "none idle for 1,000 ns yet");
        assertEquals(SenderWindows.ACCEPTED, windows.accept(3, 3, 1, 1_000), "the first one's window recycled");
        assertEquals(1, windows.recycled());
        assertEquals(SenderWindows.ACCEPTED, windows.accept(2, 2, 2, 1_001), "the second one's window kept");
        assertEquals(SenderWindows.DUPLICATE, windows.accept(2, 2, 1, 1_001));
        assertEquals(2, windows.size());
    }
}
