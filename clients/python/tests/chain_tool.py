"""Publish or verify a test chain from Python, for the cross-language tests (a separate process).

    python3 chain_tool.py DIR publish NS SEED COUNT BYTES
    python3 chain_tool.py DIR read NS SEED COUNT BYTES      pinned lookup, read of the lease, byte check
    python3 chain_tool.py DIR pin-and-hold NS SEED COUNT    pin the chain, print "pinned N", then wait for ever
    python3 chain_tool.py DIR peers NS SEED COUNT           lookup with the peers flag: one line per candidate
    python3 chain_tool.py DIR fetch NS SEED COUNT BYTES     pinned lookup with peers, read of the lease, byte check
"""

from __future__ import annotations

import sys
import time

import orbitkv
from chain import chain_fill, chain_hash


def main(argv: list[str]) -> int:
    directory, command, ns = argv[1], argv[2], argv[3].encode()
    seed, count = int(argv[4]), int(argv[5])
    size = int(argv[6]) if len(argv) > 6 else 4096
    hashes = [chain_hash(seed, i) for i in range(count)]
    with orbitkv.Client(dir=directory, name=f"py-{command}", data_region_bytes=max(count * size, 4096)) as client:
        if command == "publish":
            result = client.put(ns, hashes, [chain_fill(h, size) for h in hashes])
            print(f"op=publish stored={result.stored}")
            return 0 if result.stored + result.statuses.count("ALREADY_RESIDENT") == count else 1
        if command in ("read", "fetch"):
            found = client.lookup(ns, hashes, pin=True, peers=command == "fetch")
            assert found.lease is not None or found.prefix_len == 0
            region = client.data_region
            region[: count * size] = bytes(count * size)
            offsets = [i * size for i in range(count)]
            done = client.read_lease(found.lease, offsets, [size] * count) if found.lease else None
            restored = done.restored if done else 0
            mismatches = sum(1 for i in range(restored)
                             if bytes(region[offsets[i]:offsets[i] + size]) != chain_fill(hashes[i], size))
            peer = done.statuses[:restored].count("PEER") if done else 0
            print(f"op={command} prefix={found.prefix_len} restored={restored} mismatches={mismatches} peer={peer}")
            return 0 if restored == count and mismatches == 0 else 1
        if command == "peers":
            found = client.lookup(ns, hashes, peers=True)
            print(f"prefix={found.prefix_len} candidates={found.candidates} owners={len(found.owners)}")
            for c in found.peer_candidates:
                print(f"candidate key={c.key_index} owner={c.owner.node_id} uuid={c.owner.runtime_uuid} tier={c.tier} "
                      f"sequence={c.insertion_sequence} length={c.length}")
            return 0
        if command == "pin-and-hold":
            found = client.lookup(ns, hashes, pin=True)
            print(f"pinned {found.prefix_len}", flush=True)
            while True:
                time.sleep(1)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
