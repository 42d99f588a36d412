package io.orbitkv.manager.peer;

import org.agrona.ErrorHandler;

/**
 * The peer subscription's error handler. Aeron's {@code Image.poll} hands whatever is thrown while it reads an image
 * to it instead of throwing: an exception of the frame handler (the {@link PeerAdapter} and what it calls) goes on to
 * the Manager's error handler as before, while one of the image itself (a frame no reader can read) is only noted, for
 * the {@link PeerAgent} to reject that image and count it. Without that split, an unreadable image logged an error in
 * every duty cycle until it timed out. Used on the agent's thread only (polls run there).
 */
final class ImagePollErrors implements ErrorHandler
{
    private final ErrorHandler handlerErrors;
    private boolean handlerThrew;
    private boolean imageFailed;

    /**
     * @param handlerErrors where the frame handler's exceptions go.
     */
    ImagePollErrors(final ErrorHandler handlerErrors)
    {
        this.handlerErrors = handlerErrors;
    }

    /**
     * The frame handler is about to let {@code ex} out of a poll: what the poll reports next is the handler's.
     */
    void handlerThrew()
    {
        handlerThrew = true;
    }

    public void onError(final Throwable throwable)
    {
        if (handlerThrew)
        {
            handlerThrew = false;
            handlerErrors.onError(throwable);
        }
        else
        {
            imageFailed = true;
        }
    }

    /**
     * @return true once after a poll failed reading its image (not in the handler).
     */
    boolean takeImageFailed()
    {
        final boolean failed = imageFailed;
        imageFailed = false;
        handlerThrew = false;
        return failed;
    }
}
