package io.orbitkv.manager.catalog;

/**
 * Where a {@link PendingLookup} goes once its peer candidates are known (or its budget ran out): the ring agent,
 * which encodes the Response to the client if it is still attached.
 */
@FunctionalInterface
public interface LookupAnswerSink
{
    void answer(PendingLookup lookup);
}
