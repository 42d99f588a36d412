"""Where the time of a Python put/get of one block goes, stage by stage (a separate process, one JSON line):

    python3 bench_stages.py DIR BLOCK_BYTES REPS

copy_in (memoryview copy into the region), copy_in_memmove (ctypes.memmove of the same bytes), publish (the ring
round trip with the Manager's copy into its pool and its CRC32C), lookup (pinned), read (the Manager's copy into
the region), bytes_out (the bytes() copy out); medians in microseconds.
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import sys
import time

import orbitkv


def main(argv: list[str]) -> int:
    directory, size, reps = argv[1], int(argv[2]), int(argv[3])
    block = os.urandom(size)
    stages: dict[str, list[int]] = {k: [] for k in ("copy_in", "copy_in_memmove", "publish", "lookup", "read",
                                                     "bytes_out")}
    with orbitkv.Client(dir=directory, name=f"stages-{os.getpid()}", data_region_bytes=2 * size) as client:
        region = client.data_region
        address = ctypes.addressof(ctypes.c_char.from_buffer(region))
        ns = f"stages-{os.getpid()}"

        def timed(stage: str, action) -> object:  # type: ignore[no-untyped-def]
            start = time.perf_counter_ns()
            value = action()
            stages[stage].append(time.perf_counter_ns() - start)
            return value

        for rep in range(reps):
            h = [orbitkv.hash_from_int(rep)]
            timed("copy_in", lambda: region.__setitem__(slice(0, size), block))
            timed("copy_in_memmove", lambda: ctypes.memmove(address, block, size))
            timed("publish", lambda: client.publish(ns, h, [0], [size]))
            found = timed("lookup", lambda: client.lookup(ns, h, pin=True))
            timed("read", lambda: client.read_lease(found.lease, [size], [size]))  # type: ignore[union-attr]
            out = timed("bytes_out", lambda: bytes(region[size:2 * size]))
            assert out == block
        del address
    print(json.dumps({k: round(statistics.median(v) / 1e3) for k, v in stages.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
