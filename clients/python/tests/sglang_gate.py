"""The SGLang gate: two SGLang processes share pages through one real Manager with OrbitKV as their HiCache L3.

Engine 1 (this process) computes the page hashes of a prompt with SGLang's own chained hash, writes each page's
contents (a function of its hash) into SGLang's MHA host pool at host indices SGLang's host allocator hands out, and
backs them up as SGLang's cache controller does: batches of STORAGE_BATCH_SIZE pages through `batch_set_v1`. Engine 2
(another process, its own host pool) prefetches as SGLang does: `batch_exists` per batch with the chain's prefix
keys, then `batch_get_v1` of the hit into freshly allocated host pages, and checks every page byte for byte. Engine 2
also asks as another TP rank and with another host layout: both must miss. The backend comes from SGLang's own
factory in both. No pin or lease may be left on the Manager.

    python sglang_gate.py [--json FILE]        (scripts/gate sglang runs it in the engines' venv)

The JSON: `ok`, `package` (sglang and its version), `blocks` (pages engine 2 restored byte-exact), `mismatches`
(pages restored with other bytes), `pages`, `otherRankHits`, `otherLayoutHits`, `pinsLeft`, `seconds`.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import okv_procs  # noqa: E402
from okv_procs import Manager, wait_until  # noqa: E402

sys.path.insert(0, os.path.join(okv_procs.ROOT, "clients", "python"))

LAYERS, HEADS, HEAD_DIM, PAGE = 4, 4, 64, 16
PAGES = 300                   # three backup batches: 128, 128, 44
DEVICE_TOKENS = (PAGES + 8) * PAGE
POOL_BYTES = 64 << 20


def pool(layout: str = "page_first"):  # noqa: ANN201
    import sglang_host
    return sglang_host.mha_pool(layout, layers=LAYERS, heads=HEADS, head_dim=HEAD_DIM, page=PAGE,
                                device_tokens=DEVICE_TOKENS, ratio=2.0)


def chain(seed: int) -> list[str]:
    from sglang.srt.mem_cache.utils import get_hash_str
    rng = random.Random(seed)
    return get_hash_str([rng.randrange(3, 32000) for _ in range(PAGES * PAGE)], None, page_size=PAGE)


def contents(key: str, nbytes: int):  # noqa: ANN201
    """A page's bytes, a function of its hash (engine 2 checks against it without engine 1's pool)."""
    import torch
    generator = torch.Generator().manual_seed(int(key[:15], 16))
    return torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=generator)


def write(directory: str, seed: int) -> int:
    """Engine 1: the pages into its host pool, then backed up batch by batch; returns the pages stored."""
    import torch
    from sglang.srt.mem_cache.hicache_storage import STORAGE_BATCH_SIZE
    import sglang_host
    host = pool()
    storage = sglang_host.backend(directory, host)
    keys = chain(seed)
    stored = 0
    for first in range(0, len(keys), STORAGE_BATCH_SIZE):
        batch = keys[first:first + STORAGE_BATCH_SIZE]
        indices = host.alloc(len(batch) * PAGE)
        for i, key in enumerate(batch):
            flat = host.get_dummy_flat_data_page()
            flat.view(torch.uint8).copy_(contents(key, flat.numel() * flat.element_size()))
            host.set_from_flat_data_page(int(indices[i * PAGE]), flat)
        stored += sum(storage.batch_set_v1(batch, indices))
    storage.close()
    return stored


def read(directory: str, seed: int) -> dict:
    """Engine 2: prefetch the prompt's pages as SGLang's cache controller does, and check them."""
    import torch
    from sglang.srt.mem_cache.hicache_storage import STORAGE_BATCH_SIZE, HiCacheStorageExtraInfo
    import sglang_host
    host = pool()
    storage = sglang_host.backend(directory, host)
    keys = chain(seed)
    blocks = mismatches = hits = 0
    prefix: list[str] = []
    # a second request first allocates some host pages, so that this one's land elsewhere than engine 1's
    host.alloc(37 * PAGE)
    for first in range(0, len(keys), STORAGE_BATCH_SIZE):
        batch = keys[first:first + STORAGE_BATCH_SIZE]
        hit = storage.batch_exists(batch, HiCacheStorageExtraInfo(prefix_keys=list(prefix)))
        hits += hit
        if hit == 0:
            break
        indices = host.alloc(hit * PAGE)
        done = storage.batch_get_v1(batch[:hit], indices)
        for i, ok in enumerate(done):
            if not ok:
                break
            got = host.get_data_page(int(indices[i * PAGE]), flat=True).view(torch.uint8)
            if torch.equal(got, contents(batch[i], got.numel())):
                blocks += 1
            else:
                mismatches += 1
        if hit < len(batch):
            break
        prefix += batch
    storage.close()
    other_rank = sglang_host.backend(directory, pool(), tp_rank=1)
    other_layout = sglang_host.backend(directory, pool("layer_first"))
    result = {"blocks": blocks, "mismatches": mismatches, "hits": hits,
              "otherRankHits": other_rank.batch_exists(keys[:STORAGE_BATCH_SIZE]),
              "otherLayoutHits": other_layout.batch_exists(keys[:STORAGE_BATCH_SIZE])}
    other_rank.close()
    other_layout.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--workdir")
    parser.add_argument("--read", metavar="DIR", help=argparse.SUPPRESS)   # engine 2's process
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    if args.read:
        print(json.dumps(read(args.read, args.seed)))
        return 0
    started = time.monotonic()
    workdir = args.workdir or tempfile.mkdtemp(prefix="orbitkv-sglang-gate-")
    os.makedirs(workdir, exist_ok=True)
    manager = Manager(okv_procs.shm_dir("sglang-gate"), os.path.join(workdir, "manager.log"),
                      "--pool-bytes", str(POOL_BYTES))
    result: dict = {"ok": False, "package": {"name": "sglang", "version": importlib.metadata.version("sglang")},
                    "blocks": 0, "mismatches": 0, "pages": PAGES}
    try:
        result["stored"] = write(manager.dir, args.seed)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(okv_procs.ROOT, "clients", "python"),
                                                          env.get("PYTHONPATH")]))
        engine2 = subprocess.run([sys.executable, os.path.abspath(__file__), "--read", manager.dir, "--seed",
                                  str(args.seed)], capture_output=True, text=True, timeout=600, env=env)
        if engine2.returncode != 0:
            result["engine2"] = engine2.stderr[-4000:]
        else:
            result.update(json.loads(engine2.stdout.strip().splitlines()[-1]))
        try:
            wait_until(lambda: manager.pins() == (0, 0), 15, "no pin or lease left")
            result["pinsLeft"] = 0
        except TimeoutError:
            result["pinsLeft"] = sum(manager.pins())
        result["ok"] = (result.get("stored") == PAGES and result["blocks"] == PAGES and result["mismatches"] == 0
                        and result.get("otherRankHits") == 0 and result.get("otherLayoutHits") == 0
                        and result["pinsLeft"] == 0)
    finally:
        manager.stop()
        okv_procs.remove_tree(manager.dir)
    result["seconds"] = round(time.monotonic() - started, 1)
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    print(text)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
