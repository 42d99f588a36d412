package io.orbitkv.client;

import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;

/**
 * Total, allocation-free mapping of raw wire codes to enums: a Manager newer than this client may send values
 * this client does not know, on which the generated {@code get} would throw. Tables are filled once and never
 * written again.
 */
final class ResponseCodes
{
    private static final StatusCode[] STATUS_CODES = new StatusCode[256];
    private static final KeyStatus[] KEY_STATUSES = new KeyStatus[256];
    private static final FailureReason[] FAILURE_REASONS = new FailureReason[256];

    static
    {
        for (final StatusCode code : StatusCode.values())
        {
            if (code != StatusCode.NULL_VAL)
            {
                STATUS_CODES[code.value()] = code;
            }
        }
        for (final KeyStatus status : KeyStatus.values())
        {
            if (status != KeyStatus.NULL_VAL)
            {
                KEY_STATUSES[status.value()] = status;
            }
        }
        for (final FailureReason reason : FailureReason.values())
        {
            if (reason != FailureReason.NULL_VAL)
            {
                FAILURE_REASONS[reason.value()] = reason;
            }
        }
    }

    private ResponseCodes()
    {
    }

    static StatusCode statusCode(final short raw)
    {
        final StatusCode code = raw >= 0 && raw < STATUS_CODES.length ? STATUS_CODES[raw] : null;
        return code != null ? code : StatusCode.ERROR;
    }

    static KeyStatus keyStatus(final short raw)
    {
        final KeyStatus status = raw >= 0 && raw < KEY_STATUSES.length ? KEY_STATUSES[raw] : null;
        return status != null ? status : KeyStatus.NULL_VAL;
    }

    static FailureReason failureReason(final short raw)
    {
        final FailureReason reason = raw >= 0 && raw < FAILURE_REASONS.length ? FAILURE_REASONS[raw] : null;
        return reason != null ? reason : FailureReason.NULL_VAL;
    }
}
