"""LMCache's storage stack for one worker, built the way LMCache builds it (its YAML configuration read by
`LMCacheEngineConfig.from_file`, its `CreateStorageBackends` on an event loop of its own), for the plug-in's tests and
its gate (lmcache_gate.py)."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading

import torch

from okv_procs import wait_until

from lmcache.utils import CacheEngineKey
from lmcache.v1.config import LMCacheEngineConfig
from lmcache.v1.memory_management import MemoryFormat, TensorMemoryObj
from lmcache.v1.metadata import LMCacheMetadata
from lmcache.v1.storage_backend import CreateStorageBackends

from orbitkv.lmcache import OrbitKVConnector

MODEL = "orbitkv-test/lmcache"
CHUNK = 16                      # tokens per LMCache chunk
KV_SHAPE = (2, 2, CHUNK, 4, 32)  # layers, K and V, tokens, KV heads, head size
POOL = 16 << 20


def _config(directory: str, **ours: object) -> LMCacheEngineConfig:
    """LMCache's configuration as a user writes it (docs/engines.md), read by LMCache from a YAML file."""
    settings = {"dir": directory, "retry_attach_s": 0.2, "region_chunks": 4, **ours}
    lines = [f"chunk_size: {CHUNK}", "local_cpu: false", "max_local_cpu_size: 0.02", "remote_serde: naive",
             'remote_storage_plugins: ["orbitkv"]', "extra_config:",
             "  remote_storage_plugin.orbitkv.module_path: orbitkv.lmcache",
             "  remote_storage_plugin.orbitkv.class_name: OrbitKVConnector"]
    lines += [f"  remote_storage_plugin.orbitkv.{k}: {json.dumps(v)}" for k, v in settings.items()]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="lmcache-", delete=False) as out:
        out.write("\n".join(lines) + "\n")
    try:
        return LMCacheEngineConfig.from_file(out.name)
    finally:
        os.unlink(out.name)


def _metadata(worker_id: int = 0) -> LMCacheMetadata:
    return LMCacheMetadata(model_name=MODEL, world_size=2, local_world_size=2, worker_id=worker_id,
                           local_worker_id=worker_id, kv_dtype=torch.bfloat16, kv_shape=KV_SHAPE, chunk_size=CHUNK)


class Lmc:
    """LMCache's storage backends for one worker, on an event loop of their own (as LMCache's engine runs them)."""

    def __init__(self, directory: str, worker_id: int = 0) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="lmcache-loop", daemon=True)
        self.thread.start()
        self.metadata = _metadata(worker_id)
        self.backends = CreateStorageBackends(_config(directory), self.metadata, self.loop, dst_device="cpu")
        self.cpu = self.backends["LocalCPUBackend"]
        self.remote = self.backends["RemoteBackend-orbitkv"]
        assert self.remote.connection is not None, "LMCache did not build the plug-in (see its log)"
        self.connector: OrbitKVConnector = self.remote.connection.getWrappedConnector()

    def run(self, coro, timeout_s: float = 30):  # noqa: ANN001, ANN201
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def key(self, chunk_hash: int, worker_id: int | None = None, model: str = MODEL) -> CacheEngineKey:
        worker = self.metadata.worker_id if worker_id is None else worker_id
        return CacheEngineKey(model, self.metadata.world_size, worker, chunk_hash, torch.bfloat16)

    def chunk(self, seed: int, tokens: int = CHUNK) -> tuple[TensorMemoryObj, bytes]:
        """A MemoryObj from LMCache's local CPU backend (as its store path allocates one), filled with random KV."""
        obj = self.cpu.allocate(self.metadata.get_shapes(tokens), self.metadata.get_dtypes(), MemoryFormat.KV_2LTD)
        assert obj is not None
        generator = torch.Generator().manual_seed(seed)
        obj.tensor.copy_(torch.randn(obj.tensor.shape, generator=generator).to(torch.bfloat16))
        return obj, bytes(obj.byte_array)

    def put(self, keys: list[CacheEngineKey], objs: list[TensorMemoryObj]) -> None:
        """LMCache's store: the backend's batched put task (it returns at once), awaited by polling the Manager."""
        self.remote.batched_submit_put_task(keys, objs)
        for obj in objs:
            obj.ref_count_down()  # the store's own reference; the put task holds another until it is sent
        wait_until(lambda: self.remote.batched_contains(keys) == len(keys), 30, "the chunks stored")

    def close(self) -> None:
        # the remote backend first: its puts in flight read chunks of the local CPU backend's memory
        self.remote.close()
        for name, backend in self.backends.items():
            if backend is not self.remote:
                backend.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
