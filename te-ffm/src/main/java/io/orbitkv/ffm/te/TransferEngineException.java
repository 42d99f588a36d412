package io.orbitkv.ffm.te;

/**
 * The Transfer Engine binding could not be set up: the library is missing, does not load or lacks a bound symbol,
 * or a setting would make the library abort. The message names the file, the symbol or the accepted forms.
 */
public final class TransferEngineException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public TransferEngineException(final String message)
    {
        super(message);
    }

    public TransferEngineException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
