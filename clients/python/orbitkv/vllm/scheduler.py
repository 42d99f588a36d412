"""The connector's scheduler part (vLLM's EngineCore process): finds what OrbitKV can restore for a request, holds it
under a lease until the worker's load is done, and names the new full blocks the worker publishes."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .. import Lease, LookupResult, OrbitKVError
from .config import Identity, Settings
from .link import ManagerLink
from .metadata import BlockRun, OrbitKVMetadata, OrbitKVWorkerMeta
from .stats import COUNTERS, OrbitKVStats, write_totals

logger = logging.getLogger(__name__)


@dataclass
class _Match:
    """A pinned lookup for a waiting request: `count` blocks from block `start`, held by `lease`."""

    start: int
    hashes: list[bytes]
    tiers: list[str]
    lease: Lease | None
    epoch: int


class OrbitKVScheduler:
    def __init__(self, settings: Settings, ident: Identity) -> None:
        self._settings = settings
        self._ident = ident
        self._stats = OrbitKVStats()
        self._totals = {name: 0 for name in COUNTERS}
        # the scheduler's client moves no bytes: a region of one page
        self._link = ManagerLink(settings, "scheduler", 4096, self._stats)
        self._matches: dict[str, _Match] = {}
        self._requests: dict[str, Any] = {}
        self._save_from: dict[str, int] = {}
        self._loads: list[BlockRun] = []
        # leases handed to the worker, by the step whose metadata carried them, until the worker says which it took
        self._handed: dict[int, dict[str, tuple[Lease, int]]] = {}
        self._step = 0
        self._kv_cache_manager: Any = None

    def bind_kv_cache_manager(self, kv_cache_manager: Any) -> None:
        self._kv_cache_manager = kv_cache_manager

    # -- lookups ---------------------------------------------------------------------------------------------------

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int, bool]:
        rid = request.request_id
        self._requests[rid] = request
        bs = self._ident.block_size
        start = num_computed_tokens // bs
        # blocks of vLLM's own prefix hit were computed, and saved, by an earlier request
        self._save_from.setdefault(rid, start)
        if not self._settings.load:
            return 0, False
        # the engine computes the prompt's last token itself, so the block holding it is never loaded
        end = min(len(request.block_hashes), (request.num_tokens - 1) // bs, start + self._settings.region_blocks)
        match = self._matches.get(rid)
        if match is not None:
            if match.start == start and start + len(match.hashes) <= end:
                return len(match.hashes) * bs, False
            self._drop_match(rid)
        if end <= start:
            return 0, False
        client = self._link.client()
        if client is None:
            return 0, False
        hashes = [bytes(h) for h in request.block_hashes[start:end]]
        try:
            found = client.lookup(self._ident.namespace, hashes, pin=True, peers=self._settings.peers)
        except OrbitKVError as error:
            self._link.failed(error)
            return 0, False
        self._stats.add("lookups")
        count = found.prefix_len
        if count == 0:
            if found.lease is not None:
                self._release(found.lease, self._link.epoch)
            return 0, False
        self._matches[rid] = _Match(start, hashes[:count], _tiers(found, count), found.lease, self._link.epoch)
        return count * bs, False

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        rid = request.request_id
        self._requests[rid] = request
        match = self._matches.pop(rid, None)
        if match is None:
            return
        count = num_external_tokens // self._ident.block_size
        if count <= 0 or match.lease is None:
            if match.lease is not None:
                self._release(match.lease, match.epoch)
            return
        block_ids = list(blocks.get_block_ids()[0][match.start:match.start + count])
        self._loads.append(BlockRun(rid, match.hashes[:count], block_ids, match.lease.all_ids()))
        self._handed.setdefault(self._step + 1, {})[rid] = (match.lease, match.epoch)
        self._save_from[rid] = match.start + count
        self._stats.add("hit_blocks", count)
        self._stats.add("hit_tokens", count * self._ident.block_size)
        for tier in match.tiers[:count]:
            self._stats.add(f"tier_{tier}")

    # -- the step --------------------------------------------------------------------------------------------------

    def build_connector_meta(self, scheduler_output: Any) -> OrbitKVMetadata:
        self._step += 1
        meta = OrbitKVMetadata(self._step, self._loads, [])
        self._loads = []
        if self._settings.save and self._kv_cache_manager is not None:
            bs = self._ident.block_size
            for rid, scheduled in scheduler_output.num_scheduled_tokens.items():
                request = self._requests.get(rid)
                if request is None:
                    continue
                full = min(len(request.block_hashes), (request.num_computed_tokens + scheduled) // bs)
                # a request never asked about: its resident blocks are skipped by the worker's lookup
                start = self._save_from.get(rid, 0)
                if full <= start:
                    continue
                block_ids = self._kv_cache_manager.get_block_ids(rid)[0]
                run = BlockRun(rid, [bytes(h) for h in request.block_hashes[start:full]], list(block_ids[start:full]))
                if self._settings.lineage:
                    run.parent = bytes(request.block_hashes[start - 1]) if start > 0 else None
                    run.token_ids = list(request.all_token_ids[start * bs:full * bs])
                meta.saves.append(run)
                self._save_from[rid] = full
        return meta

    def update_connector_output(self, connector_output: Any) -> None:
        meta = getattr(connector_output, "kv_connector_worker_meta", None)
        if not isinstance(meta, OrbitKVWorkerMeta):
            return
        for step, taken in meta.taken.items():
            for rid, (lease, epoch) in self._handed.pop(step, {}).items():
                if rid not in taken:
                    self._release(lease, epoch)
        for name, value in meta.counters.items():
            self._stats.add(name, value)

    def request_finished(self, request: Any, block_ids: list[int]) -> tuple[bool, dict[str, Any] | None]:
        rid = request.request_id
        self._drop_match(rid)
        self._requests.pop(rid, None)
        self._save_from.pop(rid, None)
        return False, None

    def get_kv_connector_stats(self) -> OrbitKVStats | None:
        taken = self._stats.take()
        if taken is not None:
            for name, value in taken.data.items():
                self._totals[name] = self._totals.get(name, 0) + value
            if self._settings.stats_file:
                try:
                    write_totals(self._settings.stats_file, self._totals)
                except OSError as error:
                    logger.warning("OrbitKV: stats_file %s: %s", self._settings.stats_file, error)
        return taken

    def shutdown(self) -> None:
        for rid in list(self._matches):
            self._drop_match(rid)
        for handed in self._handed.values():
            for lease, epoch in handed.values():
                self._release(lease, epoch)
        self._handed.clear()
        self.get_kv_connector_stats()
        self._link.close()

    # -- leases ----------------------------------------------------------------------------------------------------

    def _drop_match(self, rid: str) -> None:
        match = self._matches.pop(rid, None)
        if match is not None and match.lease is not None:
            self._release(match.lease, match.epoch)

    def _release(self, lease: Lease, epoch: int) -> None:
        client = self._link.client()
        if client is None or epoch != self._link.epoch:
            return  # the Manager that held it is gone, and its leases with it
        try:
            client.release(lease)
            self._stats.add("leases_released")
        except OrbitKVError as error:
            if error.code == 15:
                return  # UNKNOWN_LEASE: a Read took it over after all
            self._link.failed(error)


def _tiers(found: LookupResult, count: int) -> list[str]:
    """Where each of the first `count` keys is: LOCAL (this Manager's DRAM), SSD, PEER or PEER_SSD."""
    peer_tier = {c.key_index: c.tier for c in found.peer_candidates}
    tiers = []
    for i, status in enumerate(found.tiers[:count]):
        if status == "PEER":
            tiers.append("PEER_SSD" if peer_tier.get(i) == "SSD" else "PEER")
        else:
            tiers.append("SSD" if status == "SSD" else "LOCAL")
    return tiers
