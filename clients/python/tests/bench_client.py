"""The Python side of `orbitkv bench client` (a separate process): prints one JSON line.

    python3 bench_client.py DIR lookup NS KEYS ITERATIONS     Lookup round trips of chain seed 7 (see chain.py)
    python3 bench_client.py DIR putget BLOCK_BYTES REPS       put/get of fresh blocks vs plain memoryview copies
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import orbitkv
from chain import chain_hash


def lookup(directory: str, ns: str, keys: int, iterations: int) -> dict[str, object]:
    hashes = [chain_hash(7, i) for i in range(keys)]
    with orbitkv.Client(dir=directory, name=f"bench-py-{os.getpid()}", data_region_bytes=1 << 20) as client:
        samples = []
        for _ in range(iterations):
            start = time.perf_counter_ns()
            found = client.lookup(ns, hashes)
            samples.append(time.perf_counter_ns() - start)
        assert found.prefix_len == keys, found
    return {"keys": keys, "iterations": iterations, "median_ns": statistics.median(samples),
            "mean_ns": statistics.fmean(samples)}


def putget(directory: str, block_bytes: int, reps: int) -> dict[str, object]:
    block = os.urandom(block_bytes)
    with orbitkv.Client(dir=directory, name=f"bench-py-{os.getpid()}", data_region_bytes=4 * block_bytes) as client:
        region = client.data_region
        ns = f"bench-putget-{os.getpid()}"
        put, get, copy_in, copy_out = [], [], [], []
        for rep in range(reps):
            h = orbitkv.hash_from_int(rep)
            start = time.perf_counter_ns()
            region[2 * block_bytes:3 * block_bytes] = block
            copy_in.append(time.perf_counter_ns() - start)
            start = time.perf_counter_ns()
            stored = client.put(ns, [h], [block])
            put.append(time.perf_counter_ns() - start)
            assert stored.stored == 1, stored
            start = time.perf_counter_ns()
            copied = bytes(region[2 * block_bytes:3 * block_bytes])
            copy_out.append(time.perf_counter_ns() - start)
            start = time.perf_counter_ns()
            got = client.get(ns, [h], offset=block_bytes)
            get.append(time.perf_counter_ns() - start)
            assert got == [block] and copied == block
    med = statistics.median
    return {"block_bytes": block_bytes, "reps": reps, "put_median_ns": med(put), "get_median_ns": med(get),
            "copy_in_median_ns": med(copy_in), "copy_out_median_ns": med(copy_out)}


def main(argv: list[str]) -> int:
    directory, command = argv[1], argv[2]
    if command == "lookup":
        result = lookup(directory, argv[3], int(argv[4]), int(argv[5]))
    else:
        result = putget(directory, int(argv[3]), int(argv[4]))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
