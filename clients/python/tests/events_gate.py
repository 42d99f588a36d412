"""The KV-events gate: a real Manager with --kv-events-* and an SSD tier; a router's SUB socket decodes its stream with
the installed vLLM's own `KVEventBatch`. Blocks are published, then pushed out of DRAM onto SSD; every block must be
announced exactly as the Manager holds it (BlockStored CPU once per publish with the hash as given, BlockRemoved CPU
and BlockStored STORAGE once per block moved, every BlockStored with the parent hash and token ids the block was
published with), the sequence must have no gap, and a replay from sequence 0 must
return, batch for batch, what the subscriber received (after AllBlocksCleared). Exit 0 only if it passes.

    python events_gate.py [--json FILE]        (scripts/gate events runs it in the engines' venv)

The JSON: `ok`, `package` (vLLM's name and version, msgspec's), `blocks` (published and checked), `moved` (to SSD),
`mismatches` (each a sentence), `batches`, `events`, `counters`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import okv_procs  # noqa: E402
from okv_procs import Manager, free_port, wait_until  # noqa: E402

import msgspec  # noqa: E402
import vllm  # noqa: E402
import zmq  # noqa: E402
from orbitkv import Client  # noqa: E402
from vllm.distributed.kv_events import (  # noqa: E402
    AllBlocksCleared, BlockRemoved, BlockStored, KVEventBatch, MEDIUM_CPU, MEDIUM_STORAGE)

TOPIC = "orbitkv-gate"
BLOCK_BYTES = 64 << 10
POOL = 8 << 20
BLOCKS = 96
TOKENS = 16
NAMESPACE = f"vllm;model=events-gate;block={TOKENS};tp=0/1".encode()
END_SEQ = (-1).to_bytes(8, "big", signed=True)
WAIT_S = 60


def run(workdir: str) -> dict:
    pub_port, replay_port = free_port(), free_port()
    ssd = tempfile.mkdtemp(prefix="orbitkv-events-gate-ssd-", dir=os.environ.get("ORBITKV_SSD_TMP", "/var/tmp"))
    manager = Manager(okv_procs.shm_dir("events-gate"), os.path.join(workdir, "manager.log"),
                      "--pool-bytes", str(POOL), "--max-block-bytes", str(BLOCK_BYTES), "--ssd-dir", ssd,
                      "--ssd-bytes", "64m", "--ssd-staging-bytes", "8m", "--kv-events-endpoint", f"tcp://*:{pub_port}",
                      "--kv-events-replay-endpoint", f"tcp://*:{replay_port}", "--kv-events-topic", TOPIC)
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt_string(zmq.SUBSCRIBE, TOPIC)
    sub.connect(f"tcp://127.0.0.1:{pub_port}")
    decoder = msgspec.msgpack.Decoder(type=KVEventBatch)
    received: list[tuple[int, KVEventBatch]] = []
    mismatches: list[str] = []

    def poll() -> None:
        while sub.poll(20):
            topic, seq, payload = sub.recv_multipart()
            received.append((int.from_bytes(seq, "big"), decoder.decode(payload)))

    def events() -> list:
        return [e for _, b in received for e in b.events]

    try:
        keys = [hashlib.sha256(f"gate-{i}".encode()).digest() for i in range(BLOCKS)]

        def parent(i: int) -> bytes | None:
            return keys[i - 1] if i > 0 else None

        def tokens(i: int) -> list[int]:
            return list(range(i * TOKENS, (i + 1) * TOKENS))
        filler = [hashlib.sha256(f"gate-filler-{i}".encode()).digest() for i in range(2 * POOL // BLOCK_BYTES)]
        with Client(dir=manager.dir, name="events-gate", data_region_bytes=16 << 20) as client:
            # the subscription is live once a probe block's event arrives (ZMQ's slow joiner)
            probes = iter(hashlib.sha256(f"gate-probe-{i}".encode()).digest() for i in range(1000))

            def joined():
                client.put(b"probe", [next(probes)], [b"p" * 4096])
                poll()
                return received
            wait_until(joined, WAIT_S, "the subscription", interval_s=0.1)
            # published with their lineage, a chain of TOKENS token ids per block, as the vLLM connector sends it
            region = client.data_region
            for start in range(0, BLOCKS, 16):
                chunk = keys[start:start + 16]
                for i in range(len(chunk)):
                    region[i * BLOCK_BYTES:(i + 1) * BLOCK_BYTES] = bytes([i & 0xFF]) * BLOCK_BYTES
                client.publish(NAMESPACE, chunk, [i * BLOCK_BYTES for i in range(len(chunk))],
                               [BLOCK_BYTES] * len(chunk), parents=[parent(start + i) for i in range(len(chunk))],
                               token_ids=[tokens(start + i) for i in range(len(chunk))])
            for start in range(0, len(filler), 16):
                client.put(b"filler", filler[start:start + 16], [b"f" * BLOCK_BYTES] * 16)
            tiers = client.lookup(NAMESPACE, keys).tiers
        moved = [k for k, t in zip(keys, tiers) if t == "SSD"]

        def complete():
            poll()
            ev = events()
            return all(any(isinstance(e, BlockStored) and e.block_hashes == [k] and e.medium == MEDIUM_STORAGE
                           for e in ev) for k in moved)
        try:
            wait_until(complete, WAIT_S, "events of every moved block", interval_s=0.05)
        except TimeoutError as ex:
            mismatches.append(str(ex))
        poll()
        ev = events()

        def count(kind, key, medium):  # noqa: ANN001
            return sum(1 for e in ev if isinstance(e, kind) and e.block_hashes == [key] and e.medium == medium)
        for i, k in enumerate(keys):
            if count(BlockStored, k, MEDIUM_CPU) != 1:
                mismatches.append(f"block {i}: {count(BlockStored, k, MEDIUM_CPU)} BlockStored CPU, expected 1")
        for e in ev:
            if isinstance(e, BlockStored) and e.block_hashes[0] in set(keys) and e.block_size != TOKENS:
                mismatches.append(f"BlockStored with block_size {e.block_size}, expected {TOKENS}")
                break
        for e in ev:
            if isinstance(e, BlockStored) and e.block_hashes[0] in set(keys):
                i = keys.index(e.block_hashes[0])
                if e.token_ids != tokens(i) or e.parent_block_hash != parent(i):
                    mismatches.append(f"block {i}: BlockStored {e.medium} without the lineage it was published with")
        if len(moved) < BLOCKS // 2:
            mismatches.append(f"only {len(moved)} of {BLOCKS} blocks moved to SSD")
        for k in moved:
            if count(BlockRemoved, k, MEDIUM_CPU) != 1 or count(BlockStored, k, MEDIUM_STORAGE) != 1:
                mismatches.append(f"moved block {keys.index(k)}: {count(BlockRemoved, k, MEDIUM_CPU)} BlockRemoved "
                                  f"CPU, {count(BlockStored, k, MEDIUM_STORAGE)} BlockStored STORAGE, expected 1 each")
        seqs = [s for s, _ in received]
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            mismatches.append("a gap in the received sequence numbers")

        replay = ctx.socket(zmq.DEALER)
        replay.connect(f"tcp://127.0.0.1:{replay_port}")
        replay.send_multipart([b"", (0).to_bytes(8, "big")])
        replayed: dict[int, KVEventBatch] = {}
        while replay.poll(WAIT_S * 1000):
            _, _, seq, payload = replay.recv_multipart()
            if seq == END_SEQ:
                break
            replayed[int.from_bytes(seq, "big")] = decoder.decode(payload)
        replay.close(linger=0)
        if not replayed or replayed.get(0) is None or replayed[0].events != [AllBlocksCleared()]:
            mismatches.append("the replay does not open with AllBlocksCleared at sequence 0")
        for s, batch in received:
            if s in replayed and replayed[s].events != batch.events:
                mismatches.append(f"replayed batch {s} differs from the one received")
        counters = manager.counters()
        kv_counters = {k: v for k, v in counters.items() if k.startswith("KV events")}
        if kv_counters.get("KV events: residency records dropped (publisher ring full)", 0) != 0:
            mismatches.append("records dropped")
        return {"ok": not mismatches,
                "package": {"name": "vllm", "version": vllm.__version__, "msgspec": msgspec.__version__},
                "blocks": BLOCKS, "moved": len(moved), "mismatches": mismatches, "batches": len(received),
                "events": len(ev), "replayed": len(replayed), "counters": kv_counters, "workdir": workdir}
    finally:
        sub.close(linger=0)
        ctx.term()
        manager.stop()
        okv_procs.remove_tree(manager.dir)
        shutil.rmtree(ssd, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="orbitkv-events-gate-")
    os.makedirs(workdir, exist_ok=True)
    try:
        result = run(workdir)
    except Exception as ex:  # noqa: BLE001 - the gate reports any failure in its JSON
        result = {"ok": False, "mismatches": [f"{type(ex).__name__}: {ex}"], "blocks": 0, "workdir": workdir}
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w") as out:
            out.write(text + "\n")
    print(text)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
