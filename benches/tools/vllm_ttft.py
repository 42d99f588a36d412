"""Time to first token inside vLLM (max_tokens=1, the engine's own generate call) with the OrbitKV connector, on an
8-layer dummy model, at several prompt lengths: cold prefill, vLLM's own prefix-cache hit, and OrbitKV hits from local
DRAM, peer DRAM, peer SSD and local SSD. Medians of --runs fresh prompts each. Run by `scripts/orbitkv bench vllm`.

Engine E (measured) is on Manager A, engine P on Manager B (same cluster, real etcd); P prefills the peer prompts.
Copies move to SSD when other blocks fill the Manager's DRAM pool.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "tests"))
import okv_procs  # noqa: E402
from okv_procs import Engine, Etcd, Manager, prompt  # noqa: E402

SHAPE = {"layers": 8, "hidden": 1024, "heads": 16, "kv-heads": 8, "intermediate": 2816}
BLOCK = 128
POOL = 256 << 20
KINDS = ("cold", "vllmPrefix", "local", "peer", "peerSsd", "ssd")


def main() -> int:
    parser = argparse.ArgumentParser(prog="orbitkv bench vllm")
    parser.add_argument("--json")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dtype", default="bfloat16",
                        help="bfloat16, or float32 on CPUs without AVX-512 BF16 / AMX (bf16 is emulated there)")
    parser.add_argument("--lengths", default="512,1024,2048")
    parser.add_argument("--measured-cores", default="0", help="VLLM_CPU_OMP_THREADS_BIND of the measured engine")
    parser.add_argument("--producer-cores", default="1", help="VLLM_CPU_OMP_THREADS_BIND of the peer-side engine")
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    model = {**SHAPE, "dtype": args.dtype}
    # layers x KV heads x block x K+V x head size x element: 2 MiB in bf16
    block_bytes = 8 * 8 * BLOCK * 2 * 64 * (2 if args.dtype == "bfloat16" else 4)
    workdir = tempfile.mkdtemp(prefix="orbitkv-bench-vllm-")
    tag = f"bench-vllm-{os.getpid()}"
    etcd = Etcd(tag)
    ssd_root = tempfile.mkdtemp(prefix="orbitkv-bench-ssd-", dir="/var/tmp")
    cluster = ["--etcd-endpoints", etcd.endpoints, "--cluster-name", tag, "--catalog-nodes", "a,b",
               "--peer-admission", "off", "--pool-bytes", str(POOL), "--ssd-bytes", "2g"]
    dirs = [okv_procs.shm_dir("bench-a"), okv_procs.shm_dir("bench-b")]
    managers, engines = [], []
    samples = {n: {k: [] for k in KINDS} for n in lengths}
    seed = int(time.time())
    try:
        for node, directory in zip("ab", dirs):
            os.makedirs(os.path.join(ssd_root, node))
            managers.append(Manager(directory, os.path.join(workdir, f"manager-{node}.log"), *cluster, "--node-id",
                                    node, "--ssd-dir", os.path.join(ssd_root, node)))
        # One core each: two engines whose OpenMP threads share both cores slow each other down many times over
        # (their barriers spin), so the measured engine has core 0 and the producer core 1.
        measured = Engine(workdir, "measured", dirs[0], model=model,
                          env_extra={"VLLM_CPU_OMP_THREADS_BIND": args.measured_cores})
        engines.append(measured)
        producer = Engine(workdir, "producer", dirs[1], model=model,
                          env_extra={"VLLM_CPU_OMP_THREADS_BIND": args.producer_cores})
        engines.append(producer)
        filler = [seed * 10]

        def push_to_ssd(directory: str) -> None:
            filler[0] += 1
            okv_procs.publish_filler(directory, POOL // block_bytes + 8, block_bytes, filler[0])

        def ttft(engine: Engine, tokens: list[int]) -> float:
            return engine.generate([tokens], max_tokens=1)[0]["seconds"] * 1000

        # warm-up: first calls pay one-time costs
        for n in lengths:
            ttft(measured, prompt(seed - 10 * n, n))
            ttft(producer, prompt(seed - 10 * n - 1, n))
        for run in range(args.runs):
            for n in lengths:
                base = seed + 1000 * run + n
                own, peer, peer_ssd = prompt(base + 1, n), prompt(base + 2, n), prompt(base + 3, n)
                samples[n]["cold"].append(ttft(measured, own))
                samples[n]["vllmPrefix"].append(ttft(measured, own))
                measured.reset()
                samples[n]["local"].append(ttft(measured, own))
                ttft(producer, peer)
                samples[n]["peer"].append(ttft(measured, peer))
                ttft(producer, peer_ssd)
                push_to_ssd(dirs[1])
                samples[n]["peerSsd"].append(ttft(measured, peer_ssd))
                push_to_ssd(dirs[0])
                measured.reset()
                samples[n]["ssd"].append(ttft(measured, own))
        stats = measured.stats()
    finally:
        for engine in engines:
            engine.stop()
        for m in managers:
            m.stop()
        etcd.stop()
        okv_procs.remove_tree(ssd_root)
        for d in dirs:
            okv_procs.remove_tree(d)

    medians = {str(n): {k: round(statistics.median(v), 2) for k, v in samples[n].items()} for n in lengths}
    ratios = {}
    for n, m in medians.items():
        ratios[n] = {"localOverVllmPrefix": round(m["local"] / m["vllmPrefix"], 3),
                     "peerOverVllmPrefix": round(m["peer"] / m["vllmPrefix"], 3),
                     **{f"{k}OverCold": round(m[k] / m["cold"], 3) for k in ("local", "peer", "peerSsd", "ssd")}}
    top = str(max(lengths))
    goals = {"localWithin1.2xOfVllmPrefix": all(r["localOverVllmPrefix"] <= 1.2 for r in ratios.values()),
             "peerWithin1.5xOfVllmPrefix": all(r["peerOverVllmPrefix"] <= 1.5 for r in ratios.values()),
             f"everyHitAt{top}Under0.25xCold": all(ratios[top][f"{k}OverCold"] < 0.25
                                                   for k in ("local", "peer", "peerSsd", "ssd"))}
    result = {"ttftMs": medians, "ratios": ratios, "goals": goals, "runs": args.runs,
              "cores": {"measured": args.measured_cores, "producer": args.producer_cores},
              "model": {**model, "blockTokens": BLOCK, "blockBytes": block_bytes},
              "cpu": _cpu(),
              "ldPreload": okv_procs.engines_env()[1]["LD_PRELOAD"], "connectorTotals": stats,
              "samplesMs": {str(n): {k: [round(x, 2) for x in v] for k, v in s.items()} for n, s in samples.items()}}
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    print(text)
    return 0


def _cpu() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        text = info.read()
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "?")
    flags = [f for f in ("avx512f", "avx512_bf16", "amx_bf16") if f" {f}" in text]
    return f"{name}, {os.cpu_count()} cores, {' '.join(flags) or 'no AVX-512/AMX'}"


if __name__ == "__main__":
    sys.exit(main())
