"""Read a Manager's CnC file (codecs/.../cnc/CncFileDescriptor.java) without a JVM: header, counters, error log.

The counters are Agrona's CountersManager layout (metadata records of 512 bytes: state int at 0, type id at 4, label
length int at 128 and the label after it; values of 128 bytes, the value a long at 0) and the error log Agrona's
DistinctErrorLog (records aligned to 8: length int, observation count int, last and first observation ms as longs,
then the encoded error). All numbers are little-endian (x86, as the Manager writes them through Unsafe).
"""

import mmap
import os
import struct

LAYOUT_VERSION = 2
HEADER_LENGTH = 4096
SECTION_ALIGNMENT = 4096
SLOT_LENGTH = 64

METADATA_LENGTH = 512
COUNTER_LENGTH = 128
LABEL_OFFSET = 128
MAX_LABEL_LENGTH = 380
RECORD_ALLOCATED = 1

ERROR_HEADER = 24
ERROR_ALIGNMENT = 8


def _align(n, a=SECTION_ALIGNMENT):
    return (n + a - 1) // a * a


class Snapshot:
    """One read of a CnC file: pid, runtime UUID, counters by id and label, distinct errors."""

    def __init__(self, pid, runtime_uuid, start_ms, counters, labels, errors):
        self.pid = pid
        self.runtime_uuid = runtime_uuid
        self.start_ms = start_ms
        self.counters = counters  # id -> value
        self.labels = labels  # id -> label
        self.errors = errors  # [(count, first_ms, last_ms, text)]

    def value(self, counter_id, default=None):
        return self.counters.get(counter_id, default)


def read(path, ids=None):
    """Snapshot of the CnC file at path, or None when it is missing or not ready (layout version not written).
    With ids, only those counters are read (no labels, no error log): the sampler's cheap read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size < HEADER_LENGTH:
            return None
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
            return _parse(m, size, ids)
    finally:
        os.close(fd)


def _parse(m, size, ids):
    (version,) = struct.unpack_from("<i", m, 0)
    if version != LAYOUT_VERSION:
        return None
    pid, start_ms, msb, lsb = struct.unpack_from("<qqqq", m, 8)
    request_ring, max_clients, response_ring, meta_len, values_len, error_len = struct.unpack_from("<iiiiii", m, 48)
    slots = HEADER_LENGTH + _align(request_ring)
    rings = slots + _align(max_clients * SLOT_LENGTH)
    meta = rings + max_clients * _align(response_ring)
    values = meta + _align(meta_len)
    errors_at = values + _align(values_len)
    if errors_at + error_len > size:
        return None
    counters = {}
    labels = {}
    uuid = "%016x%016x" % (msb & 0xFFFFFFFFFFFFFFFF, lsb & 0xFFFFFFFFFFFFFFFF)
    if ids is not None:
        for cid in ids:
            if struct.unpack_from("<i", m, meta + cid * METADATA_LENGTH)[0] == RECORD_ALLOCATED:
                (counters[cid],) = struct.unpack_from("<q", m, values + cid * COUNTER_LENGTH)
        return Snapshot(pid, uuid, start_ms, counters, labels, [])
    for cid in range(values_len // COUNTER_LENGTH):
        rec = meta + cid * METADATA_LENGTH
        (state,) = struct.unpack_from("<i", m, rec)
        if state != RECORD_ALLOCATED:
            continue
        (label_len,) = struct.unpack_from("<i", m, rec + LABEL_OFFSET)
        label_len = max(0, min(label_len, MAX_LABEL_LENGTH))
        labels[cid] = bytes(m[rec + LABEL_OFFSET + 4:rec + LABEL_OFFSET + 4 + label_len]).decode("utf-8", "replace")
        (counters[cid],) = struct.unpack_from("<q", m, values + cid * COUNTER_LENGTH)
    errors = []
    offset = 0
    while offset + ERROR_HEADER <= error_len:
        length, count, last_ms, first_ms = struct.unpack_from("<iiqq", m, errors_at + offset)
        if length <= 0:
            break
        text = bytes(m[errors_at + offset + ERROR_HEADER:errors_at + offset + length]).decode("utf-8", "replace")
        errors.append((count, first_ms, last_ms, text))
        offset += _align(length, ERROR_ALIGNMENT)
    return Snapshot(pid, uuid, start_ms, counters, labels, errors)
