package io.orbitkv.codecs;

import io.orbitkv.codecs.engine.LookupFlagsEncoder;
import io.orbitkv.codecs.engine.ReadFlagsEncoder;

/**
 * The engine ring's request flags as int bit masks, for code that holds a request's flags as a plain value (the
 * Manager's request handler, raw test clients). Each bit is taken from the schema's set ({@code LookupFlags},
 * {@code ReadFlags}) through its generated encoder, so the schema stays the one place a choice's position is written.
 */
public final class RequestFlags
{
    /** Lookup: pin the resident prefix under a lease. */
    public static final int LOOKUP_PIN = LookupFlagsEncoder.pin((byte)0, true) & 0xFF;

    /**
     * Lookup: after the local prefix, ask the cluster catalog for the following keys (since schema version 2). A
     * standalone Manager accepts it and answers as a local lookup.
     */
    public static final int LOOKUP_PEERS = LookupFlagsEncoder.peers((byte)0, true) & 0xFF;

    /** Every lookup flag the schema defines; any other bit is refused. */
    public static final int LOOKUP_KNOWN = LOOKUP_PIN | LOOKUP_PEERS;

    /** Read (since schema version 3): after the local prefix, fetch the following blocks from the peers that hold them. */
    public static final int READ_PEERS = ReadFlagsEncoder.peers((byte)0, true) & 0xFF;

    /** Every read flag the schema defines; any other bit is refused. */
    public static final int READ_KNOWN = READ_PEERS;

    private RequestFlags()
    {
    }
}
