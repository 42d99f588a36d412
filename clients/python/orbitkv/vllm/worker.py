"""The connector's worker part (vLLM's model worker process): copies whole blocks between the Manager's shared data
region and vLLM's KV tensors, one OrbitKV block holding all layers of one vLLM block, layer after layer.

The data region holds `region_blocks` blocks for loads, then as many for saves. A copy is one tensor operation per
layer over all blocks of a run (index_copy_ / index_select along the block dimension), never a loop over tokens."""

from __future__ import annotations

import logging
import time
from typing import Any

import torch

from .. import Client, OrbitKVError, Ticket, _native
from .config import Identity, Settings
from .link import ManagerLink
from .metadata import BlockRun, OrbitKVMetadata, OrbitKVWorkerMeta
from .stats import OrbitKVStats

logger = logging.getLogger(__name__)


class _Layer:
    """One layer's KV tensor and where its part of a block sits in an OrbitKV block."""

    __slots__ = ("tensor", "block_dim", "offset", "nbytes", "block_shape")

    def __init__(self, tensor: torch.Tensor, block_dim: int, offset: int) -> None:
        self.tensor = tensor
        self.block_dim = block_dim
        self.offset = offset
        shape = list(tensor.shape)
        del shape[block_dim]
        self.block_shape = tuple(shape)
        self.nbytes = tensor.element_size() * (tensor.numel() // tensor.shape[block_dim])


class OrbitKVWorker:
    def __init__(self, settings: Settings, ident: Identity, num_blocks: int) -> None:
        self._settings = settings
        self._ident = ident
        self._num_blocks = num_blocks
        self._stats = OrbitKVStats()
        self._layers: list[_Layer] = []
        self._region: torch.Tensor | None = None
        self._link: ManagerLink | None = None
        self._load_errors: set[int] = set()
        self._taken: dict[int, set[str]] = {}
        self._save_ticket: Ticket | None = None
        self._meta: OrbitKVMetadata | None = None

    # -- set-up ----------------------------------------------------------------------------------------------------

    def register_kv_caches(self, kv_caches: dict[str, torch.Tensor]) -> None:
        missing = [name for name in self._ident.layer_names if name not in kv_caches]
        if missing:
            raise RuntimeError(f"OrbitKV: vLLM registered no KV tensor for layers {missing}")
        offset = 0
        for name in self._ident.layer_names:
            tensor = kv_caches[name]
            dims = [d for d, size in enumerate(tensor.shape) if size == self._num_blocks]
            if not dims:
                raise RuntimeError(f"OrbitKV: layer {name}'s KV tensor {tuple(tensor.shape)} has no dimension of "
                                   f"{self._num_blocks} blocks")
            layer = _Layer(tensor, dims[0], offset)
            offset += layer.nbytes
            self._layers.append(layer)
        if offset != self._ident.block_bytes:
            raise RuntimeError(f"OrbitKV: the KV tensors hold {offset} bytes per block, the scheduler expects "
                               f"{self._ident.block_bytes}")
        region_bytes = 2 * self._settings.region_blocks * offset
        self._link = ManagerLink(self._settings, "worker", region_bytes, self._stats, self._map_region,
                                 self._unmap_region)
        self._link.client()
        logger.info("OrbitKV: %d layers, %d bytes per block, namespace %s", len(self._layers), offset,
                    self._ident.namespace.decode())

    def _map_region(self, client: Client) -> None:
        self._region = torch.frombuffer(client.data_region, dtype=torch.uint8)
        self._save_ticket = None

    def _unmap_region(self) -> None:
        self._region = None
        self._save_ticket = None

    def _blocks(self, first: int, count: int) -> torch.Tensor:
        """`count` OrbitKV blocks of the region from block slot `first`, as [count, block_bytes] bytes."""
        size = self._ident.block_bytes
        assert self._region is not None
        return self._region[first * size:(first + count) * size].view(count, size)

    def _layer_view(self, blocks: torch.Tensor, layer: _Layer) -> torch.Tensor:
        """The layer's part of each block, typed and shaped like the layer's tensor with the blocks first."""
        part = blocks[:, layer.offset:layer.offset + layer.nbytes].view(layer.tensor.dtype)
        return part.unflatten(1, layer.block_shape)

    # -- loads -----------------------------------------------------------------------------------------------------

    def bind(self, meta: OrbitKVMetadata) -> None:
        self._meta = meta

    def start_load_kv(self) -> None:
        meta = self._meta
        if meta is None or not meta.loads:
            return
        taken = self._taken.setdefault(meta.step, set())
        client = self._link.client() if self._link is not None else None
        for run in meta.loads:
            restored = 0
            if client is not None and self._region is not None:
                try:
                    restored = self._load(client, run)
                    taken.add(run.req_id)
                except OrbitKVError as error:
                    # refused or lost: the lease stayed with the scheduler, which releases it
                    self._link.failed(error)
                    client = self._link.attached
                except Exception:  # noqa: BLE001 - a failed load is recomputed, never raised into the step
                    logger.exception("OrbitKV: load of %s failed", run.req_id)
                    self._stats.add("errors")
            if restored < len(run.block_ids):
                self._stats.add("load_errors", len(run.block_ids) - restored)
                self._load_errors.update(run.block_ids[restored:])

    def _load(self, client: Client, run: BlockRun) -> int:
        started = time.perf_counter()
        count = len(run.hashes)
        size = self._ident.block_bytes
        offsets = [i * size for i in range(count)]
        ids = run.lease_ids
        result = client.read(self._ident.namespace, run.hashes, offsets, [size] * count,
                             lease_id=ids[0] if len(ids) == 1 else 0, lease_ids=ids if len(ids) > 1 else ())
        restored = result.restored
        for i in range(restored):
            if result.lengths[i] != size:
                logger.warning("OrbitKV: block %d of %s is %d bytes, not %d: recomputed", i, run.req_id,
                               result.lengths[i], size)
                restored = i
                break
        if restored < count:
            logger.warning("OrbitKV: restored %d of %d blocks of %s (%s): the rest is recomputed", restored, count,
                           run.req_id, result.statuses[restored] if restored < len(result.statuses) else "short")
        if restored:
            blocks = self._blocks(0, restored)
            index = torch.tensor(run.block_ids[:restored], dtype=torch.long)
            for layer in self._layers:
                source = self._layer_view(blocks, layer)
                if layer.block_dim:
                    source = source.movedim(0, layer.block_dim)
                layer.tensor.index_copy_(layer.block_dim, index, source)
        self._stats.add("loaded_blocks", restored)
        self._stats.add("load_bytes", restored * size)
        self._stats.add("load_seconds", time.perf_counter() - started)
        return restored

    def get_block_ids_with_load_errors(self) -> set[int]:
        errors, self._load_errors = self._load_errors, set()
        return errors

    # -- saves -----------------------------------------------------------------------------------------------------

    def wait_for_save(self) -> None:
        meta = self._meta
        if meta is None or not meta.saves or self._link is None:
            return
        client = self._link.client()
        if client is None or self._region is None:
            self._stats.add("save_skipped_blocks", sum(len(run.hashes) for run in meta.saves))
            return
        deadline = time.perf_counter() + self._settings.save_timeout_ms / 1000
        try:
            if not self._save_area_free(client):
                self._stats.add("save_skipped_blocks", sum(len(run.hashes) for run in meta.saves))
                return
            hashes = [h for run in meta.saves for h in run.hashes]
            block_ids = [b for run in meta.saves for b in run.block_ids]
            lineage = _lineage(meta.saves, self._ident.block_size)
            for first in range(0, len(hashes), self._settings.region_blocks):
                chunk = slice(first, first + self._settings.region_blocks)
                if not self._save(client, hashes[chunk], block_ids[chunk], lineage and lineage[chunk], deadline):
                    self._stats.add("save_skipped_blocks", max(0, len(hashes) - first - self._settings.region_blocks))
                    return
        except OrbitKVError as error:
            self._link.failed(error)
        except Exception:  # noqa: BLE001 - a failed save is a future miss, never raised into the step
            logger.exception("OrbitKV: save failed")
            self._stats.add("errors")

    def _save_area_free(self, client: Client) -> bool:
        """False while a publish that outlived its wait still reads the save area."""
        if self._save_ticket is None:
            return True
        if client.poll(self._save_ticket) is None:
            return False
        self._save_ticket = None
        return True

    def _save(self, client: Client, hashes: list[bytes], block_ids: list[int],
              lineage: list[tuple[bytes | None, list[int] | None]] | None, deadline: float) -> bool:
        started = time.perf_counter()
        # blocks another engine (or an earlier request) published already are not copied again
        resident = client.lookup(self._ident.namespace, hashes).prefix_len
        self._stats.add("save_resident_blocks", resident)
        hashes, block_ids = hashes[resident:], block_ids[resident:]
        lineage = lineage[resident:] if lineage else None
        if not hashes:
            return True
        count = len(hashes)
        size = self._ident.block_bytes
        first = self._settings.region_blocks
        blocks = self._blocks(first, count)
        index = torch.tensor(block_ids, dtype=torch.long)
        for layer in self._layers:
            source = layer.tensor.index_select(layer.block_dim, index)
            if layer.block_dim:
                source = source.movedim(layer.block_dim, 0)
            self._layer_view(blocks, layer).copy_(source)
        offsets, lengths = [(first + i) * size for i in range(count)], [size] * count
        ticket = None
        if lineage:
            try:
                ticket = client.submit_publish(self._ident.namespace, hashes, offsets, lengths,
                                               parents=[p for p, _ in lineage], token_ids=[t for _, t in lineage])
            except OrbitKVError as error:
                if error.code not in (_native.S_BATCH_TOO_LARGE, _native.S_KEY_TOO_LARGE):
                    raise
                # the lineage does not fit one request: the blocks are published without it
                self._stats.add("lineage_dropped_blocks", count)
        if ticket is None:
            ticket = client.submit_publish(self._ident.namespace, hashes, offsets, lengths)
        wait_ms = max(1, int((deadline - time.perf_counter()) * 1000))
        try:
            published = client.wait(ticket, timeout_ms=wait_ms)
        except OrbitKVError as error:
            if error.code != -6:
                raise
            # still in flight: the save area stays its until it completes; later saves skip meanwhile
            self._save_ticket = ticket
            self._stats.add("save_timeouts")
            return False
        self._stats.add("saved_blocks", published.stored)
        self._stats.add("save_resident_blocks", count - published.stored)
        self._stats.add("save_bytes", published.stored * size)
        self._stats.add("save_seconds", time.perf_counter() - started)
        return True

    # -- reports ---------------------------------------------------------------------------------------------------

    def build_worker_meta(self) -> OrbitKVWorkerMeta | None:
        counters = self._stats.take()
        if not self._taken and counters is None:
            return None
        meta = OrbitKVWorkerMeta(self._taken, counters.data if counters is not None else {})
        self._taken = {}
        return meta

    def clear(self) -> None:
        self._meta = None

    def shutdown(self) -> None:
        if self._link is not None:
            self._link.close()


def _lineage(saves: list[BlockRun], block_size: int) -> list[tuple[bytes | None, list[int] | None]] | None:
    """Per saved block, in the order of the saves' hashes: its parent hash and its token ids, for the KV events."""
    if not any(run.token_ids is not None for run in saves):
        return None
    lineage: list[tuple[bytes | None, list[int] | None]] = []
    for run in saves:
        for j in range(len(run.hashes)):
            parent = run.parent if j == 0 else run.hashes[j - 1]
            tokens = run.token_ids[j * block_size:(j + 1) * block_size] if run.token_ids is not None else None
            lineage.append((parent, tokens))
    return lineage
