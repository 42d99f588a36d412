"""The connector's counters, as vLLM's KVConnectorStats (so they reach vLLM's own stats and metrics)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from vllm.distributed.kv_transfer.kv_connector.v1.metrics import KVConnectorStats

# Every counter, in the order they are printed. Tiers say where restored blocks came from: this host's Manager from
# DRAM (LOCAL) or SSD, another Manager from DRAM (PEER) or SSD (PEER_SSD).
COUNTERS = (
    "lookups", "hit_blocks", "hit_tokens", "tier_LOCAL", "tier_SSD", "tier_PEER", "tier_PEER_SSD",
    "loaded_blocks", "load_bytes", "load_seconds", "load_errors",
    "saved_blocks", "save_resident_blocks", "save_bytes", "save_seconds", "save_timeouts", "save_skipped_blocks",
    "lineage_dropped_blocks",
    "leases_released", "manager_unavailable", "errors",
)


@dataclass
class OrbitKVStats(KVConnectorStats):
    """Counters since the last report; `aggregate` adds, `reduce` gives them to vLLM's logger."""

    def __post_init__(self) -> None:
        for name in COUNTERS:
            self.data.setdefault(name, 0)

    def add(self, name: str, value: float = 1) -> None:
        self.data[name] = self.data.get(name, 0) + value

    def reset(self) -> None:
        self.data = {name: 0 for name in COUNTERS}

    def aggregate(self, other: KVConnectorStats) -> KVConnectorStats:
        for name, value in other.data.items():
            if isinstance(value, (int, float)):
                self.add(name, value)
        return self

    def reduce(self) -> dict[str, int | float]:
        return {name: value for name, value in self.data.items() if value}

    def is_empty(self) -> bool:
        return not any(self.data.values())

    def take(self) -> "OrbitKVStats | None":
        """This interval's counters (None if nothing happened); the counters start again from zero."""
        if self.is_empty():
            return None
        taken = OrbitKVStats(dict(self.data))
        self.reset()
        return taken


def write_totals(path: str, totals: dict[str, Any]) -> None:
    """Cumulative counters as JSON, replaced atomically (for tools that read them from outside the engine)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(totals, out, sort_keys=True)
    os.replace(tmp, path)
