"""Real processes for the engine tests, the vLLM gate and the TTFT bench: Managers (scripts/orbitkv manager), a local
etcd (scripts/etcd) and vLLM engines (vllm_engine.py in the engines' venv), each started, awaited with a deadline and
stopped by its own pid."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ORBITKV = os.path.join(ROOT, "scripts", "orbitkv")
ENGINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vllm_engine.py")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["ORBITKV_SKIP_BUILD"] = "1"
    return env


def engines_env() -> tuple[str, dict[str, str]]:
    """The engines' interpreter (installed by scripts/engines when missing) and an environment for vLLM on this host:
    tcmalloc + libiomp5 preloaded, 1 GiB of KV cache, its caches under /tmp, this checkout's orbitkv package."""
    lines = subprocess.run([os.path.join(ROOT, "scripts", "engines"), "--env"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    values = dict(line.removeprefix("export ").split("=", 1) for line in lines if line.startswith("export "))
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": values["LD_PRELOAD"],
        "VLLM_CPU_KVCACHE_SPACE": env.get("VLLM_CPU_KVCACHE_SPACE", "1"),
        "VLLM_CACHE_ROOT": env.get("VLLM_CACHE_ROOT", os.path.join(tempfile.gettempdir(), "orbitkv-vllm-cache")),
        "PYTHONPATH": os.path.join(ROOT, "clients", "python"),
    })
    env.pop("PYTHONHASHSEED", None)
    return values["ORBITKV_ENGINES_PYTHON"], env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout_s: float, what: str, interval_s: float = 0.2) -> Any:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout_s} s")
        time.sleep(interval_s)


_READY = re.compile(r"^\s+ready \d+ ms after process start", re.M)


class Manager:
    """One Manager process on its own directory (and optionally in a cluster)."""

    def __init__(self, directory: str, log: str, *args: str, java_opts: str = "") -> None:
        self.dir = directory
        self.args = args
        self.log = log
        self.java_opts = java_opts
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self, timeout_s: float = 90) -> None:
        """Start and wait for its ready line. A clustered Manager restarted under the same node id waits until its
        previous incarnation's registration expired (the etcd lease's TTL)."""
        os.makedirs(os.path.dirname(self.dir), exist_ok=True)
        deadline = time.monotonic() + timeout_s
        while True:
            env = _env()
            if self.java_opts:
                env["ORBITKV_JAVA_OPTS"] = self.java_opts
            self._log_start = os.path.getsize(self.log) if os.path.exists(self.log) else 0
            with open(self.log, "ab") as out:
                self.proc = subprocess.Popen(
                    [ORBITKV, "manager", "--dir", self.dir, "--client-timeout", "2s", *self.args],
                    stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            state = wait_until(self._state, max(1.0, deadline - time.monotonic()), f"Manager at {self.dir}")
            if state == "ready":
                return
            if "already registered" not in self._log_tail() or time.monotonic() > deadline:
                raise RuntimeError(f"Manager at {self.dir} exited: see {self.log}")
            time.sleep(1)

    def _log_tail(self) -> str:
        with open(self.log, "rb") as log:
            log.seek(self._log_start)
            return log.read().decode("utf-8", "replace")

    def _state(self) -> str | None:
        # the Manager's own ready line: a bare "ready " would also match a refusal that says "already registered"
        if _READY.search(self._log_tail()):
            return "ready"
        if self.proc is not None and self.proc.poll() is not None:
            return "exited"
        return None

    def counters(self) -> dict[str, int]:
        """Counter label -> value, from `scripts/orbitkv stat --once` (the CnC file, as an operator reads it)."""
        out = subprocess.run([ORBITKV, "stat", "--once", "--dir", self.dir], capture_output=True, text=True,
                             env=_env(), timeout=60).stdout
        # values are printed with thousands separators (%,d)
        return {m.group(2).strip(): int(m.group(1).replace(",", ""))
                for m in re.finditer(r"^\s*\d+:\s+(-?[\d,]+) - (.+)$", out, re.M)}

    def pins(self) -> tuple[int, int]:
        counters = self.counters()
        return counters["Pins active"], counters["Leases active"]

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)


def publish_filler(directory: str, blocks: int, block_bytes: int, seed: int) -> None:
    """Publish `blocks` blocks of another namespace through the Manager, to push older blocks out of its DRAM."""
    subprocess.run([ORBITKV, "client", "--dir", directory, "publish", "--namespace", f"filler-{seed}", "--seed",
                    str(seed), "--blocks", str(blocks), "--block-bytes", str(block_bytes)], check=True,
                   capture_output=True, env=_env(), timeout=120)


class Etcd:
    def __init__(self, name: str) -> None:
        self.name = name
        line = subprocess.run([os.path.join(ROOT, "scripts", "etcd"), "start", name], check=True,
                              capture_output=True, text=True).stdout.strip()
        self.endpoints = line.split("=", 1)[1]

    def stop(self) -> None:
        subprocess.run([os.path.join(ROOT, "scripts", "etcd"), "stop", self.name], capture_output=True)


class Engine:
    """A vLLM engine (vllm_engine.py) in its own process group, driven by JSON lines."""

    def __init__(self, workdir: str, name: str, orbitkv_dir: str | None, *, model: dict[str, Any] | None = None,
                 extra: dict[str, Any] | None = None, ready_timeout_s: float = 300,
                 env_extra: dict[str, str] | None = None) -> None:
        python, env = engines_env()
        env.update(env_extra or {})
        self.stats_file = os.path.join(workdir, f"{name}-stats.json")
        self.log = os.path.join(workdir, f"{name}.log")
        model = dict(model or {})
        model_dir = os.path.join(workdir, "model-" + "-".join(f"{k}{v}" for k, v in sorted(model.items())))
        self.model_dir = model_dir
        args = [python, ENGINE, "--model-dir", model_dir]
        for key, value in model.items():
            args += [f"--{key}", str(value)]
        if orbitkv_dir is not None:
            args += ["--orbitkv-dir", orbitkv_dir, "--stats-file", self.stats_file, "--extra", json.dumps(extra or {})]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                         text=True, start_new_session=True)
        import queue
        import threading
        self._answers: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, name=f"{name}-stdout", daemon=True).start()
        ready = self._answer(ready_timeout_s)
        if not ready.get("ready"):
            raise RuntimeError(f"engine {name} did not start: see {self.log}")

    def _read(self) -> None:
        """The engine's stdout: answers (JSON lines) to the queue, vLLM's own log lines to the log file."""
        with open(self.log, "a", encoding="utf-8") as log:
            for line in self.proc.stdout:
                if line.startswith("{"):
                    self._answers.put(json.loads(line))
                else:
                    log.write(line)
                    log.flush()
        self._answers.put(None)

    def _answer(self, timeout_s: float) -> dict[str, Any]:
        import queue
        try:
            answer = self._answers.get(timeout=timeout_s)
        except queue.Empty:
            raise TimeoutError(f"engine: no answer within {timeout_s} s (log {self.log})") from None
        if answer is None:
            raise RuntimeError(f"engine exited (log {self.log})")
        return answer

    def ask(self, request: dict[str, Any], timeout_s: float = 300) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._answer(timeout_s)

    def generate(self, prompts: list[list[int]], max_tokens: int = 4) -> list[dict[str, Any]]:
        return self.ask({"op": "generate", "prompts": prompts, "max_tokens": max_tokens})["outputs"]

    def reset(self) -> None:
        self.ask({"op": "reset"})

    def stats(self) -> dict[str, float]:
        """The connector's cumulative counters (its stats_file, written by the scheduler part)."""
        try:
            with open(self.stats_file, encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.ask({"op": "quit"}, timeout_s=5)
            except (TimeoutError, RuntimeError, BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        else:
            # vLLM's EngineCore and worker are in the engine's process group: leave none behind
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def prompt(seed: int, length: int) -> list[int]:
    """A fresh token-id prompt (a new seed per scenario, so no engine has seen it)."""
    import random
    rng = random.Random(seed)
    return [rng.randrange(3, 31999) for _ in range(length)]


def shm_dir(tag: str) -> str:
    return os.path.join("/dev/shm/orbitkv", f"{tag}-{os.getpid()}")


def remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit("a helper module")
