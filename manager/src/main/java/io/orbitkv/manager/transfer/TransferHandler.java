package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;

/**
 * Transfer control messages (schema {@code io.orbitkv.codecs.transfer}) the {@link TransferAdapter} delivers on the
 * peer agent's thread. The adapter has checked the frame's header, its peer session (or client), that the route's
 * destination is this incarnation and that the sender is the incarnation that opened the session; judging the sender
 * against the member view and everything in the body is the handler's. Decoders are wrapped at the message and valid
 * only during the call; a group or length running past the frame throws out of the decoder while the handler reads
 * it, and the adapter counts the frame as malformed. Answers leave through the source's {@link TransferProxy} and
 * requests through the requester's.
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
