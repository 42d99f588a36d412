"""OrbitKV as vLLM's KV connector, loaded by configuration alone:

    kv_transfer_config={"kv_connector": "OrbitKVConnector", "kv_connector_module_path": "orbitkv.vllm",
                        "kv_role": "kv_both", "kv_connector_extra_config": {"dir": "/dev/shm/orbitkv/default"}}

The class vLLM loads is a facade: built for the scheduler role it holds an `OrbitKVScheduler` (lookups, leases, what
to save), for the worker role an `OrbitKVWorker` (copies between the Manager's data region and the KV tensors);
`OrbitKVMetadata` passes between them each step. Failures never reach the engine's step: a block that cannot be
restored is reported for recomputation, a missing Manager is a warning and a counter. See docs/engines.md.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from vllm.distributed.kv_transfer.kv_connector.v1.base import KVConnectorBase_V1, KVConnectorRole

from .config import ConnectorConfigError, Identity, Settings, identity
from .metadata import BlockRun, OrbitKVMetadata, OrbitKVWorkerMeta
from .scheduler import OrbitKVScheduler
from .stats import OrbitKVStats
from .worker import OrbitKVWorker

if TYPE_CHECKING:
    import torch

__all__ = [
    "BlockRun", "ConnectorConfigError", "Identity", "OrbitKVConnector", "OrbitKVMetadata", "OrbitKVScheduler",
    "OrbitKVStats", "OrbitKVWorker", "OrbitKVWorkerMeta", "Settings", "identity",
]

logger = logging.getLogger(__name__)


class OrbitKVConnector(KVConnectorBase_V1):
    def __init__(self, vllm_config: Any, role: KVConnectorRole, kv_cache_config: Any = None) -> None:
        super().__init__(vllm_config, role, kv_cache_config)
        transfer = vllm_config.kv_transfer_config
        settings = Settings.parse(transfer.kv_connector_extra_config)
        ident = identity(vllm_config, kv_cache_config)
        if transfer.kv_load_failure_policy != "recompute":
            # a block OrbitKV cannot deliver is a cache miss: the engine recomputes it rather than failing the request
            logger.info("OrbitKV: kv_load_failure_policy %s -> recompute", transfer.kv_load_failure_policy)
            transfer.kv_load_failure_policy = "recompute"
        self._scheduler: OrbitKVScheduler | None = None
        self._worker: OrbitKVWorker | None = None
        if role == KVConnectorRole.SCHEDULER:
            self._scheduler = OrbitKVScheduler(settings, ident)
        else:
            self._worker = OrbitKVWorker(settings, ident, kv_cache_config.num_blocks)

    @classmethod
    def build_kv_connector_stats(cls, data: dict[str, Any] | None = None) -> OrbitKVStats:
        return OrbitKVStats(dict(data or {}))

    # -- scheduler side --------------------------------------------------------------------------------------------

    def bind_kv_cache_manager(self, kv_cache_manager: Any) -> None:
        super().bind_kv_cache_manager(kv_cache_manager)
        assert self._scheduler is not None
        self._scheduler.bind_kv_cache_manager(kv_cache_manager)

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int | None, bool]:
        assert self._scheduler is not None
        return _guard(self._scheduler.get_num_new_matched_tokens, (0, False), request, num_computed_tokens)

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        assert self._scheduler is not None
        _guard(self._scheduler.update_state_after_alloc, None, request, blocks, num_external_tokens)

    def build_connector_meta(self, scheduler_output: Any) -> OrbitKVMetadata:
        assert self._scheduler is not None
        return self._scheduler.build_connector_meta(scheduler_output)

    def update_connector_output(self, connector_output: Any) -> None:
        assert self._scheduler is not None
        _guard(self._scheduler.update_connector_output, None, connector_output)

    def request_finished(self, request: Any, block_ids: list[int]) -> tuple[bool, dict[str, Any] | None]:
        assert self._scheduler is not None
        return _guard(self._scheduler.request_finished, (False, None), request, block_ids)

    # -- worker side -----------------------------------------------------------------------------------------------

    def register_kv_caches(self, kv_caches: dict[str, "torch.Tensor"]) -> None:
        assert self._worker is not None
        self._worker.register_kv_caches(kv_caches)

    def bind_connector_metadata(self, connector_metadata: Any) -> None:
        super().bind_connector_metadata(connector_metadata)
        if self._worker is not None and isinstance(connector_metadata, OrbitKVMetadata):
            self._worker.bind(connector_metadata)

    def clear_connector_metadata(self) -> None:
        super().clear_connector_metadata()
        if self._worker is not None:
            self._worker.clear()

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        assert self._worker is not None
        self._worker.start_load_kv()

    def wait_for_layer_load(self, layer_name: str) -> None:
        return  # loads complete in start_load_kv, before the forward pass

    def save_kv_layer(self, layer_name: str, kv_layer: Any, attn_metadata: Any, **kwargs: Any) -> None:
        return  # a block is published whole, all layers at once, in wait_for_save

    def wait_for_save(self) -> None:
        assert self._worker is not None
        self._worker.wait_for_save()

    def get_block_ids_with_load_errors(self) -> set[int]:
        assert self._worker is not None
        return self._worker.get_block_ids_with_load_errors()

    def build_connector_worker_meta(self) -> OrbitKVWorkerMeta | None:
        assert self._worker is not None
        return self._worker.build_worker_meta()

    # -- both ------------------------------------------------------------------------------------------------------

    def get_kv_connector_stats(self) -> OrbitKVStats | None:
        # the worker's counters travel to the scheduler part in its worker metadata and are reported from there once
        return self._scheduler.get_kv_connector_stats() if self._scheduler is not None else None

    def shutdown(self) -> None:
        part = self._scheduler or self._worker
        if part is not None:
            _guard(part.shutdown, None)


def _guard(call: Any, fallback: Any, *args: Any) -> Any:
    """Run a scheduler hook; an unexpected failure is logged and answered as if OrbitKV had nothing."""
    try:
        return call(*args)
    except Exception:  # noqa: BLE001 - never raised into the engine's step
        logger.exception("OrbitKV: %s failed; going on without OrbitKV for it", getattr(call, "__name__", call))
        return fallback
