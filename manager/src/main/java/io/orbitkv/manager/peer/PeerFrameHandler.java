package io.orbitkv.manager.peer;

import org.agrona.DirectBuffer;

/**
 * Where the {@link PeerAdapter} hands a frame of one schema it does not decode itself: the catalog's messages other
 * than the session protocol, or the transfer control messages. The adapter has counted the frame's bytes and checked
 * that it holds a message header naming {@link #schemaId()}; everything after that (version, template, block length,
 * the session the body names, the body) is the handler's, which counts and answers what it refuses. The frame is valid
 * only during the call. One handler per schema, given to {@link PeerTransport#newAgent}.
 */
public interface PeerFrameHandler
{
    /**
     * @return the SBE schema id of the frames this handler takes.
     */
    int schemaId();

    /**
     * One frame of {@link #schemaId()}.
     *
     * @param buffer holding the frame.
     * @param offset of the message header in {@code buffer}.
     * @param length of the frame.
     * @param nowNs  the peer agent's duty cycle time.
     */
    void onFrame(DirectBuffer buffer, int offset, int length, long nowNs);

    /**
     * A handler for a schema this peer knows but has no part for: each frame is only counted.
     *
     * @param schemaId the schema the frames carry.
     * @param counters the transport's counters.
     * @param counter  what each dropped frame increments.
     * @return the counting handler.
     */
    static PeerFrameHandler dropping(final int schemaId, final PeerCounters counters, final PeerCounter counter)
    {
        return new PeerFrameHandler()
        {
            public int schemaId()
            {
                return schemaId;
            }

            public void onFrame(final DirectBuffer buffer, final int offset, final int length, final long nowNs)
            {
                counters.increment(counter);
            }
        };
    }
}
