package io.orbitkv.manager.idle;

/**
 * An input other than the doorbell whose arrivals end an agent's sleep, handed over by the part that owns it (the peer
 * transport its socket): the descriptor the sleep watches, edge triggered, once there is one; the input's own
 * {@link IdleWait} for the time before that; and a call back when the sleep saw the descriptor become readable.
 */
public interface IdleInput extends IdleWait
{
    /**
     * The descriptor to watch. Its owner, not the sleep, reads it.
     *
     * @return the descriptor, or -1 while there is none that can be watched (not open yet, or a fallback).
     */
    int descriptor();

    /**
     * A sleep ended because the descriptor became readable: the owner's next duty cycle should read it.
     */
    void onReadable();
}
