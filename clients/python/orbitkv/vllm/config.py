"""The connector's settings (`kv_connector_extra_config`), the identity of the blocks it stores (the namespace), and
the geometry of one OrbitKV block; computed alike in the scheduler and the worker process from vLLM's own config."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

from .. import _native

DEFAULT_DIR = "/dev/shm/orbitkv/default"
# vLLM's hash choices whose NONE_HASH seed is fixed when PYTHONHASHSEED is unset (vllm.v1.core.kv_cache_utils).
CRYPTOGRAPHIC_HASH_ALGOS = ("sha256", "sha256_cbor")
LAYOUT_UNKNOWN = "unreported"


class ConnectorConfigError(ValueError):
    """A setting or an engine configuration the connector cannot serve: raised at start, never in a step."""


@dataclass(frozen=True)
class Settings:
    """`kv_connector_extra_config` keys (docs/engines.md)."""

    dir: str = DEFAULT_DIR
    region_blocks: int = 64
    peers: bool = True
    save: bool = True
    lineage: bool = True
    load: bool = True
    save_timeout_ms: int = 500
    load_timeout_ms: int = 10_000
    retry_attach_s: float = 5.0
    stats_file: str | None = None

    @staticmethod
    def parse(extra: dict[str, Any] | None) -> "Settings":
        extra = dict(extra or {})
        known = set(Settings.__dataclass_fields__)
        unknown = sorted(set(extra) - known)
        if unknown:
            raise ConnectorConfigError(f"unknown kv_connector_extra_config keys {unknown}; known: {sorted(known)}")
        try:
            settings = Settings(
                dir=str(extra.get("dir", DEFAULT_DIR)),
                region_blocks=int(extra.get("region_blocks", 64)),
                peers=_flag(extra.get("peers", True)),
                save=_flag(extra.get("save", True)),
                lineage=_flag(extra.get("lineage", True)),
                load=_flag(extra.get("load", True)),
                save_timeout_ms=int(extra.get("save_timeout_ms", 500)),
                load_timeout_ms=int(extra.get("load_timeout_ms", 10_000)),
                retry_attach_s=float(extra.get("retry_attach_s", 5.0)),
                stats_file=str(extra["stats_file"]) if extra.get("stats_file") else None,
            )
        except (TypeError, ValueError) as error:
            raise ConnectorConfigError(f"kv_connector_extra_config: {error}") from None
        if not 1 <= settings.region_blocks <= _native.MAX_KEYS:
            raise ConnectorConfigError(f"region_blocks {settings.region_blocks} outside 1..{_native.MAX_KEYS}")
        if settings.save_timeout_ms < 1 or settings.load_timeout_ms < 1 or settings.retry_attach_s < 0:
            raise ConnectorConfigError("save_timeout_ms and load_timeout_ms must be >= 1, retry_attach_s >= 0")
        return settings


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"not a boolean: {value!r}")


@dataclass(frozen=True)
class Identity:
    """Everything that changes the bytes of a block, bound into the namespace, and the size of one OrbitKV block
    (all layers of one vLLM block, layer after layer in the order vLLM lists them)."""

    namespace: bytes
    block_size: int
    layer_names: tuple[str, ...]
    layer_bytes: int

    @property
    def block_bytes(self) -> int:
        return self.layer_bytes * len(self.layer_names)


def identity(vllm_config: Any, kv_cache_config: Any) -> Identity:
    """The namespace and block geometry of this engine, or ConnectorConfigError when its blocks cannot be shared:
    not one group of dense attention, TP other than 1, or block hashes that differ between processes."""
    cache = vllm_config.cache_config
    if not cache.enable_prefix_caching:
        raise ConnectorConfigError("OrbitKV needs enable_prefix_caching=True (its keys are vLLM's block hashes)")
    algo = str(cache.prefix_caching_hash_algo)
    hash_seed = os.environ.get("PYTHONHASHSEED")
    if algo not in CRYPTOGRAPHIC_HASH_ALGOS and hash_seed is None:
        raise ConnectorConfigError(
            f"prefix_caching_hash_algo={algo} seeds its block hashes at random in every process, so no other engine "
            f"could ever match them: use sha256 (the default) or sha256_cbor, or set one PYTHONHASHSEED for all engines")
    parallel = vllm_config.parallel_config
    if parallel.tensor_parallel_size != 1 or parallel.pipeline_parallel_size != 1:
        raise ConnectorConfigError(
            f"OrbitKV's vLLM connector serves TP=1, PP=1 (got TP={parallel.tensor_parallel_size}, "
            f"PP={parallel.pipeline_parallel_size})")
    groups = kv_cache_config.kv_cache_groups
    if len(groups) != 1:
        raise ConnectorConfigError(f"OrbitKV stores one KV cache group of dense attention, this model has {len(groups)}")
    spec = groups[0].kv_cache_spec
    if type(spec).__name__ != "FullAttentionSpec":
        raise ConnectorConfigError(f"OrbitKV stores dense attention KV, this model's cache is {type(spec).__name__}")
    model = vllm_config.model_config
    layers = tuple(groups[0].layer_names)
    layout = str(getattr(kv_cache_config, "kv_cache_layout", None) or LAYOUT_UNKNOWN)
    fields = [
        ("model", str(model.model)),
        ("revision", str(model.revision or "")),
        ("dtype", str(spec.dtype).removeprefix("torch.")),
        ("layout", layout),
        ("block", str(spec.block_size)),
        ("layers", str(len(layers))),
        ("kvheads", str(spec.num_kv_heads)),
        ("headsize", str(spec.head_size)),
        ("tp", f"{parallel.rank}/{parallel.tensor_parallel_size}"),
        ("hash", algo),
    ]
    if hash_seed is not None:
        # engines share blocks only with engines of the same seed
        fields.append(("seed", hashlib.sha256(hash_seed.encode()).hexdigest()[:16]))
    if str(vllm_config.load_config.load_format) == "dummy":
        # random weights are equal only between engines of the same seed
        fields.append(("dummyseed", str(model.seed)))
    namespace = "vllm;" + ";".join(f"{k}={v}" for k, v in fields)
    if len(namespace.encode()) > _native.MAX_NAMESPACE_LENGTH:
        digest = hashlib.sha256(namespace.encode()).hexdigest()
        namespace = f"vllm;sha256={digest}"
    return Identity(namespace.encode(), spec.block_size, layers, spec.page_size_bytes)
