package io.orbitkv.catalog;

/**
 * Receives records read back from an {@link OwnerJournal} (gap repair, snapshot interval). Implementations are
 * preallocated objects, not capturing lambdas, so reads allocate nothing.
 */
@FunctionalInterface
public interface JournalReader
{
    /**
     * @param record the record; valid only during the call.
     */
    void onRecord(JournalRecord record);
}
