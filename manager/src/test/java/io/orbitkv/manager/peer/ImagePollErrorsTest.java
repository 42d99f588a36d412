package io.orbitkv.manager.peer;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ImagePollErrorsTest
{
    private final List<Throwable> logged = new ArrayList<>();
    private final ImagePollErrors errors = new ImagePollErrors(logged::add);

    @Test
    void shouldNoteAFailureReadingTheImageWithoutLoggingIt()
    {
        errors.onError(new IndexOutOfBoundsException("Range [1073741823, 1073741823 + 4) out of bounds"));
        assertTrue(logged.isEmpty());
        assertTrue(errors.takeImageFailed());
        assertFalse(errors.takeImageFailed(), "reported once");
    }

    @Test
    void shouldLogTheFrameHandlersExceptionAsBeforeAndNotBlameTheImage()
    {
        final IllegalStateException handlerBug = new IllegalStateException("handler");
        errors.handlerThrew();
        errors.onError(handlerBug);
        assertEquals(1, logged.size());
        assertSame(handlerBug, logged.get(0));
        assertFalse(errors.takeImageFailed());

        // The mark covers one report only: the next failure is the image's again.
        errors.onError(new IndexOutOfBoundsException());
        assertEquals(1, logged.size());
        assertTrue(errors.takeImageFailed());
    }
}
