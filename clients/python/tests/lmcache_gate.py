"""The LMCache gate: two LMCache storage stacks (two engines' worth, each built by the installed LMCache from its YAML
configuration, each its own client of one real Manager) share chunks through the OrbitKV plug-in. Engine 1 stores
prompts' chunk chains (full chunks and a partial last one); engine 2 finds each chain with a pinned async lookup as a
prefix (extended by chunks nobody stored) and reads it with its non-blocking batched get, byte for byte; no lease may
be left. Exit 0 only if it passes.

    python lmcache_gate.py [--json FILE] [--workdir DIR]   (scripts/gate lmcache runs it in the engines' venv)

The JSON: `ok`, `package` (name and version of the installed LMCache), `blocks` (chunks engine 2 restored),
`mismatches` (chunks that differ), `prefixes` (per prompt: chunks found of those asked), `leasesLeft`."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import okv_procs  # noqa: E402
from lmcache_storage import CHUNK, POOL, Lmc  # noqa: E402
from okv_procs import Manager, wait_until  # noqa: E402

PROMPTS = 8
CHUNKS_PER_PROMPT = 8   # the last one partial
PARTIAL_TOKENS = 5
UNKNOWN_TAIL = 2        # chunks asked for after each chain that nobody stored


def run(workdir: str) -> dict:
    os.makedirs(workdir, exist_ok=True)
    manager = Manager(okv_procs.shm_dir("lmcache-gate"), os.path.join(workdir, "manager.log"), "--pool-bytes",
                      str(POOL))
    writer = reader = None
    try:
        writer = Lmc(manager.dir, worker_id=0)
        reader = Lmc(manager.dir, worker_id=0)
        hashes = random.Random(os.getpid())
        chains = []
        for p in range(PROMPTS):
            keys = [writer.key(hashes.getrandbits(64)) for _ in range(CHUNKS_PER_PROMPT)]
            chunks = [writer.chunk(1000 * p + i, CHUNK if i < CHUNKS_PER_PROMPT - 1 else PARTIAL_TOKENS)
                      for i in range(CHUNKS_PER_PROMPT)]
            writer.put(keys, [obj for obj, _ in chunks])
            chains.append((keys, [expected for _, expected in chunks]))
        blocks = mismatches = 0
        prefixes = []
        for p, (keys, expected) in enumerate(chains):
            asked = keys + [reader.key(hashes.getrandbits(64)) for _ in range(UNKNOWN_TAIL)]
            found = reader.run(reader.remote.batched_async_contains(f"gate-{p}", asked, pin=True))
            prefixes.append([found, len(asked)])
            got = reader.run(reader.remote.batched_get_non_blocking(f"gate-{p}", asked[:found]))
            blocks += len(got)
            mismatches += sum(1 for obj, want in zip(got, expected) if bytes(obj.byte_array) != want)
            mismatches += abs(len(got) - len(expected))
            for obj in got:
                obj.ref_count_down()
        wait_until(lambda: manager.pins()[1] == 0, 10, "the leases released")
        leases = manager.pins()[1]
        total = PROMPTS * CHUNKS_PER_PROMPT
        ok = (blocks == total and mismatches == 0 and leases == 0
              and all(found == CHUNKS_PER_PROMPT for found, _ in prefixes))
        return {"ok": ok, "package": {"name": "lmcache", "version": importlib.metadata.version("lmcache")},
                "blocks": blocks, "expectedBlocks": total, "mismatches": mismatches, "prefixes": prefixes,
                "leasesLeft": leases, "writer": writer.connector.stats(), "reader": reader.connector.stats()}
    finally:
        for engine in (writer, reader):
            if engine is not None:
                engine.close()
        manager.stop()
        okv_procs.remove_tree(manager.dir)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    result = run(args.workdir or tempfile.mkdtemp(prefix="orbitkv-lmcache-gate-"))
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    print(text)
    print(f"lmcache gate: {'PASS' if result['ok'] else 'FAIL'}", file=sys.stderr)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
