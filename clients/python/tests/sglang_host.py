"""SGLang's host KV pools and storage backends as SGLang's cache controller builds them, on this CPU: the host pool
from its device pool's buffer description (the device buffers here CPU tensors), the backend through SGLang's own
factory (the `dynamic` backend and its extra config, as `--hicache-storage-backend dynamic` does), then the pool
registered. Shared by the SGLang storage tests and the SGLang gate."""

from __future__ import annotations

import torch
from sglang.srt.mem_cache.device_pool_info import KVBufferLayout, KVBuffers, MHABufferInfo, MLABufferInfo
from sglang.srt.mem_cache.hicache_storage import HiCacheStorageConfig
from sglang.srt.mem_cache.pool_host.mha import MHATokenToKVPoolHost
from sglang.srt.mem_cache.pool_host.mla import MLATokenToKVPoolHost
from sglang.srt.mem_cache.storage import StorageBackendFactory


def mha_pool(layout: str, *, layers: int, heads: int, head_dim: int, page: int, device_tokens: int,
             dtype: torch.dtype = torch.bfloat16, ratio: float = 2.0) -> MHATokenToKVPoolHost:
    k = tuple(torch.zeros(device_tokens + page, heads, head_dim, dtype=dtype) for _ in range(layers))
    v = tuple(torch.zeros(device_tokens + page, heads, head_dim, dtype=dtype) for _ in range(layers))
    info = MHABufferInfo(buffers=KVBuffers(k=k, v=v, k_data_ptrs=_ptrs(k), v_data_ptrs=_ptrs(v),
                                           layout=KVBufferLayout.NHD),
                         page_size=page, head_num=heads, head_dim=head_dim, v_head_dim=head_dim, dtype=dtype,
                         device=torch.device("cpu"))
    return MHATokenToKVPoolHost(info, ratio, 0, page, layout, pin_memory=False, device="cpu",
                                device_capacity_tokens=device_tokens, start_layer=0, end_layer=layers)


def mla_pool(layout: str, *, layers: int, kv_lora_rank: int, rope_dim: int, page: int, device_tokens: int,
             dtype: torch.dtype = torch.bfloat16, ratio: float = 2.0) -> MLATokenToKVPoolHost:
    rows = tuple(torch.zeros(device_tokens + page, 1, kv_lora_rank + rope_dim, dtype=dtype) for _ in range(layers))
    info = MLABufferInfo(buffers=rows, data_ptrs=_ptrs(rows), layer_indices=tuple(range(layers)),
                         device_layer_num=layers, page_size=page, kv_lora_rank=kv_lora_rank,
                         qk_rope_head_dim=rope_dim, kv_cache_dim=kv_lora_rank + rope_dim, dtype=dtype,
                         device=torch.device("cpu"))
    return MLATokenToKVPoolHost(info, ratio, 0, page, layout, pin_memory=False, device="cpu",
                                device_capacity_tokens=device_tokens, start_layer=0, end_layer=layers,
                                target_layer_num=layers)


def backend(directory: str, pool, *, tp_rank: int = 0, tp_size: int = 2, model: str = "org/model-a",  # noqa: ANN001
            **extra):  # noqa: ANN201
    """OrbitKV's backend as SGLang's cache controller makes it (attach_storage_backend): the factory, then the pool."""
    config = HiCacheStorageConfig(
        tp_rank=tp_rank, tp_size=tp_size, pp_rank=0, pp_size=1, attn_cp_rank=0, attn_cp_size=1,
        is_mla_model=isinstance(pool, MLATokenToKVPoolHost), enable_storage_metrics=True,
        is_page_first_layout=pool.layout == "page_first", model_name=model,
        extra_config={"backend_name": "orbitkv", "module_path": "orbitkv.sglang", "class_name": "OrbitKVStorage",
                      "dir": directory, "interface_v1": 1, **extra})
    storage = StorageBackendFactory.create_backend("dynamic", config, pool)
    storage.register_mem_pool_host(pool)
    return storage


def _ptrs(tensors) -> torch.Tensor:  # noqa: ANN001
    return torch.tensor([t.data_ptr() for t in tensors], dtype=torch.uint64)
