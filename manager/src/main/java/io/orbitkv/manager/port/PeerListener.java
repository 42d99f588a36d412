package io.orbitkv.manager.port;

/**
 * The one way back from the peer side to whoever asked through the {@link PeerPort} (the engine ring's request
 * handler): a lookup has its candidates, or a fetch has its answer. Named with each request, so the peer side holds
 * no reference to the ring. Called on the agent thread. A lookup handle is valid during the call only; a fetch
 * handle stays the ring's until it lets it go ({@link PeerPort#release}, or the Read that used it was answered).
 */
public interface PeerListener
{
    /**
     * A peer lookup is resolved: its keys after the local prefix have candidates up to the first that had none (or
     * its budget ran out). A pinned lookup whose sources were asked to hold its keys is answered by
     * {@link #onFetchAnswered} instead.
     */
    void onLookupAnswered(LookupHandle lookup);

    /**
     * A fetch has its answer: a READ restored what it could, a HOLD (a pinned lookup) holds what its sources granted.
     */
    void onFetchAnswered(FetchHandle fetch);
}
