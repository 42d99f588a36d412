#!/usr/bin/env python3
"""Mooncake Transfer Engine over TCP as a bench anchor: the published wheel's Python engine (it has no C API), two
processes on loopback, one-sided READs of fixed-size blocks from a registered buffer of the target process.

    python mooncake_te_anchor.py --block-bytes 2097152 --seconds 5 --batch 1 --batch 4

Prints one JSON line: {"available": true, "runs": [{"batch": 1, "blockBytes": ..., "bytes": ..., "seconds": ...,
"gbps": ...}, ...]}, or {"available": false, "reason": "..."} when the wheel does not import or initialize.
A batch of n submits n blocks in one batch_transfer_sync_read (the engine's own concurrency), the nearest thing to
n streams.
"""
import argparse
import json
import subprocess
import sys
import time

HOST = "127.0.0.1"


def engine():
    from mooncake.engine import TransferEngine
    te = TransferEngine()
    if te.initialize(HOST, "P2PHANDSHAKE", "tcp", "") != 0:
        raise RuntimeError("TransferEngine.initialize failed")
    return te


def target(buffer_bytes):
    te = engine()
    addr = te.allocate_managed_buffer(buffer_bytes)
    if not addr:
        raise RuntimeError("allocate_managed_buffer failed")
    print(json.dumps({"port": te.get_rpc_port(), "addr": addr}), flush=True)
    sys.stdin.read()  # until the initiator closes the pipe


def initiator(args):
    buffer_bytes = args.block_bytes * max(args.batch)
    child = subprocess.Popen([sys.executable, __file__, "--role", "target", "--block-bytes", str(args.block_bytes),
                              "--buffer-bytes", str(buffer_bytes)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        if not line:
            raise RuntimeError("the target process exited before it registered its buffer")
        remote = json.loads(line)
        te = engine()
        local = te.allocate_managed_buffer(buffer_bytes)
        peer = "%s:%d" % (HOST, remote["port"])
        runs = []
        for batch in args.batch:
            locals_ = [local + i * args.block_bytes for i in range(batch)]
            remotes = [remote["addr"] + i * args.block_bytes for i in range(batch)]
            lengths = [args.block_bytes] * batch
            read = (lambda: te.transfer_sync_read(peer, locals_[0], remotes[0], lengths[0])) if 1 == batch else \
                (lambda: te.batch_transfer_sync_read(peer, locals_, remotes, lengths))
            for _ in range(3):  # connect and warm up
                if read() != 0:
                    raise RuntimeError("warm-up read failed")
            moved = 0
            start = time.perf_counter()
            deadline = start + args.seconds
            while time.perf_counter() < deadline:
                if read() != 0:
                    raise RuntimeError("read failed")
                moved += batch * args.block_bytes
            took = time.perf_counter() - start
            runs.append({"batch": batch, "blockBytes": args.block_bytes, "bytes": moved, "seconds": took,
                         "gbps": moved * 8 / took / 1e9})
        print(json.dumps({"available": True, "runs": runs}), flush=True)
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=["initiator", "target"], default="initiator")
    parser.add_argument("--block-bytes", type=int, default=2 << 20)
    parser.add_argument("--buffer-bytes", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--batch", type=int, action="append")
    args = parser.parse_args()
    args.batch = args.batch or [1, 4]
    try:
        if "target" == args.role:
            target(args.buffer_bytes)
        else:
            initiator(args)
    except (ImportError, OSError, RuntimeError) as ex:
        if "target" == args.role:
            raise
        print(json.dumps({"available": False, "reason": "%s: %s" % (type(ex).__name__, ex)}), flush=True)


if __name__ == "__main__":
    main()
