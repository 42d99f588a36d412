package io.orbitkv.manager.peer;

import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;

/**
 * Decoded transfer control messages (schema {@code io.orbitkv.codecs.transfer}) delivered by the {@link PeerAdapter}
 * on the peer agent's thread. The adapter has checked the frame's header, its peer session (or client), that the
 * route's destination is this incarnation and that the sender is the incarnation that opened the session; judging
 * the sender against the member view and everything in the body is the handler's. Decoders are wrapped at the
 * message and valid only during the call; a group or length running past the frame throws out of the decoder while
 * the handler reads it, and the adapter counts the frame as malformed. Answers leave through
 * {@link PeerPublisher#offer(PeerSession, org.agrona.DirectBuffer, int, int)} (source) and requests through
 * {@link PeerPublisher#offer(PeerClient, org.agrona.DirectBuffer, int, int)} (requester). Given to
 * {@link PeerTransport#newAgent} with the catalog's handler.
 */
public interface TransferHandler
{
    /**
     * Source: a requester asks for a grant; answer on {@code session} with a TransferGrant.
     */
    void onAuthorize(PeerSession session, TransferAuthorizeDecoder request);

    /**
     * Source: a requester ends a session; answer on {@code session} with a TransferReleaseAck.
     */
    void onRelease(PeerSession session, TransferReleaseDecoder request);

    /**
     * Requester: the answer to an authorization sent through {@code client}.
     */
    void onGrant(PeerClient client, TransferGrantDecoder grant);

    /**
     * Requester: the answer to a release sent through {@code client}.
     */
    void onReleaseAck(PeerClient client, TransferReleaseAckDecoder ack);
}
