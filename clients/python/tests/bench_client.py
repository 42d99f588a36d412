"""The Python side of `orbitkv bench client` (a separate process): prints one JSON line.

    python3 bench_client.py DIR lookup NS KEYS ITERATIONS [GAP_NS]   Lookup round trips of chain seed 7 (see
                                                              chain.py), as a list of hashes and as PackedHashes,
                                                              with a busy wait of GAP_NS before each
    python3 bench_client.py DIR putget BLOCK_BYTES REPS [BATCH]   put/get of fresh blocks, one and BATCH per call,
                                                                  vs as many plain memoryview copies
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import orbitkv
from chain import chain_hash


def lookup(directory: str, ns: str, keys: int, iterations: int, gap_ns: int = 0) -> dict[str, object]:
    """Round trips of a list of hashes (each call checks and packs them) and of the same hashes packed once
    (`orbitkv.PackedHashes`), interleaved in blocks of 1000; with `gap_ns`, a busy wait that long before each call
    (an engine's own work)."""
    hashes = [chain_hash(7, i) for i in range(keys)]
    packed = orbitkv.PackedHashes(hashes)
    with orbitkv.Client(dir=directory, name=f"bench-py-{os.getpid()}", data_region_bytes=1 << 20) as client:
        samples: list[int] = []
        packed_samples: list[int] = []
        for start in range(0, iterations, 1000):
            for form, out in ((hashes, samples), (packed, packed_samples)):
                for _ in range(min(1000, iterations - start)):
                    if gap_ns:
                        until = time.perf_counter_ns() + gap_ns
                        while time.perf_counter_ns() < until:
                            pass
                    begin = time.perf_counter_ns()
                    found = client.lookup(ns, form)
                    out.append(time.perf_counter_ns() - begin)
                assert found.prefix_len == keys, found
    return {"keys": keys, "iterations": iterations, "median_ns": statistics.median(samples),
            "mean_ns": statistics.fmean(samples), "packed_median_ns": statistics.median(packed_samples)}


COLD_BYTES = 256 << 20  # the cold anchor's buffer: far more than the bench VM's caches


def putget(directory: str, block_bytes: int, reps: int, batch: int) -> dict[str, object]:
    """put/get of one block per call (`reps` times) and of `batch` blocks per call (max(1, reps // 4) times), each
    next to the same number of plain memoryview copies of the same bytes (into the region for put, out of it for
    get); batch figures are per block. A second anchor for put copies the batch's blocks into memory that is not in
    cache (a pre-faulted buffer of COLD_BYTES, each copy to the next place in it), as put's bytes land in the
    Manager's pool rather than in the one hot slot the first anchor reuses. With a Manager that lets engines map its
    pool, the same batch is also saved without a copy (prepare, copy into the pool slots, commit), per block."""
    singles = [os.urandom(block_bytes) for _ in range(reps)]
    blocks = [os.urandom(block_bytes) for _ in range(batch)]
    anchor = orbitkv.PIPELINE_SLOTS * block_bytes  # past the slots put and get use
    region_bytes = (orbitkv.PIPELINE_SLOTS + 1) * block_bytes
    cold = bytearray(max(COLD_BYTES, 2 * block_bytes))
    for page in range(0, len(cold), 4096):
        cold[page] = 1
    cold_view = memoryview(cold)
    cold_slots = len(cold) // block_bytes
    cold_next = 0
    with orbitkv.Client(dir=directory, name=f"bench-py-{os.getpid()}", data_region_bytes=region_bytes) as client, \
            orbitkv.Client(dir=directory, name=f"bench-py-warm-{os.getpid()}", data_region_bytes=4096) as warm:
        if warm.pool is not None:
            warm.populate_pool()
        region = client.data_region
        ns = f"bench-putget-{os.getpid()}"
        put, get, copy_in, copy_out = [], [], [], []
        for rep in range(reps):
            block = singles[rep]
            h = orbitkv.hash_from_int(rep)
            start = time.perf_counter_ns()
            region[anchor:anchor + block_bytes] = block
            copy_in.append(time.perf_counter_ns() - start)
            start = time.perf_counter_ns()
            stored = client.put(ns, [h], [block])
            put.append(time.perf_counter_ns() - start)
            assert stored.stored == 1, stored
            start = time.perf_counter_ns()
            copied = bytes(region[anchor:anchor + block_bytes])
            copy_out.append(time.perf_counter_ns() - start)
            start = time.perf_counter_ns()
            got = client.get(ns, [h])
            get.append(time.perf_counter_ns() - start)
            assert got == [block] and copied == block
        bput, bget, bcopy_in, bcopy_out, bcopy_cold, bsave, bsave_populated = [], [], [], [], [], [], []
        copies: list[bytes] = []
        got = []
        for rep in range(max(1, reps // 4)):
            hashes = [orbitkv.hash_from_int(((rep + 1) << 32) | j) for j in range(batch)]
            start = time.perf_counter_ns()
            for block in blocks:
                region[anchor:anchor + block_bytes] = block
            bcopy_in.append((time.perf_counter_ns() - start) / batch)
            start = time.perf_counter_ns()
            for block in blocks:
                at = cold_next * block_bytes
                cold_view[at:at + block_bytes] = block
                cold_next = (cold_next + 1) % cold_slots
            bcopy_cold.append((time.perf_counter_ns() - start) / batch)
            start = time.perf_counter_ns()
            stored = client.put(ns, hashes, blocks)
            bput.append((time.perf_counter_ns() - start) / batch)
            assert stored.stored == batch, stored
            # both the copies and get build `batch` new bytes objects: each starts with the previous ones freed
            copies = got = []
            start = time.perf_counter_ns()
            copies = [bytes(region[anchor:anchor + block_bytes]) for _ in blocks]
            bcopy_out.append((time.perf_counter_ns() - start) / batch)
            assert len(copies) == batch
            copies = []
            start = time.perf_counter_ns()
            got = client.get(ns, hashes)
            bget.append((time.perf_counter_ns() - start) / batch)
            assert got == blocks
            if client.pool is not None:
                # the zero-copy save (Client.save: prepare, then copy into each slot and commit it at once) of the
                # same number of fresh blocks; by
                # this client, whose mapping of the pool has never been touched where the slots are, and by one that
                # mapped the whole pool in beforehand (populate_pool)
                for saver, samples, tag in ((client, bsave, 1), (warm, bsave_populated, 2)):
                    saved = [orbitkv.hash_from_int(((rep + 1) << 40) | (tag << 20) | j) for j in range(batch)]
                    start = time.perf_counter_ns()
                    committed = saver.save(ns, saved, blocks)
                    samples.append((time.perf_counter_ns() - start) / batch)
                    assert committed.stored == batch, committed
    med = statistics.median
    return {"block_bytes": block_bytes, "reps": reps, "batch": batch, "slots": orbitkv.PIPELINE_SLOTS,
            "put_median_ns": med(put), "get_median_ns": med(get),
            "copy_in_median_ns": med(copy_in), "copy_out_median_ns": med(copy_out),
            "batch_put_median_ns": med(bput), "batch_get_median_ns": med(bget),
            "batch_copy_in_median_ns": med(bcopy_in), "batch_copy_out_median_ns": med(bcopy_out),
            "batch_copy_cold_median_ns": med(bcopy_cold),
            "batch_save_median_ns": med(bsave) if bsave else None,
            "batch_save_populated_median_ns": med(bsave_populated) if bsave_populated else None}


def main(argv: list[str]) -> int:
    directory, command = argv[1], argv[2]
    if command == "lookup":
        result = lookup(directory, argv[3], int(argv[4]), int(argv[5]), int(argv[6]) if len(argv) > 6 else 0)
    else:
        result = putget(directory, int(argv[3]), int(argv[4]), int(argv[5]) if len(argv) > 5 else 20)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
