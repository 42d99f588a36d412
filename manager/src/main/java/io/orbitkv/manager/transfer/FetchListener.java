package io.orbitkv.manager.transfer;

/**
 * Told when a {@link PeerFetch} has its answer: a READ restored what it could, a HOLD authorized what it could. Called
 * on the agent thread; the fetch's answer part is valid during the call only.
 */
@FunctionalInterface
public interface FetchListener
{
    void onFetchAnswered(PeerFetch fetch);
}
