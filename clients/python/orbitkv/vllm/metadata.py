"""What the connector's scheduler part tells its worker part each step, and what the worker part answers."""

from __future__ import annotations

from dataclasses import dataclass, field

from vllm.distributed.kv_transfer.kv_connector.v1.base import KVConnectorMetadata, KVConnectorWorkerMetadata


@dataclass
class BlockRun:
    """Blocks of one request: OrbitKV keys (vLLM's block hashes) and the vLLM block ids they are copied to or from.

    A load carries the lease of the scheduler's pinned lookup (one id per lookup request of the chain), which the
    worker's Read takes over from the scheduler's client and the Manager releases when the Read completes. A save
    may carry the blocks' lineage for the Manager's KV events: the hash of the block before the first (None for a
    request's first block) and the run's token ids, block_size per block.
    """

    req_id: str
    hashes: list[bytes]
    block_ids: list[int]
    lease_ids: tuple[int, ...] = ()
    parent: bytes | None = None
    token_ids: list[int] | None = None


@dataclass
class OrbitKVMetadata(KVConnectorMetadata):
    """One engine step: the runs to restore before the forward pass and the new full blocks to publish after it."""

    step: int
    loads: list[BlockRun] = field(default_factory=list)
    saves: list[BlockRun] = field(default_factory=list)


@dataclass
class OrbitKVWorkerMeta(KVConnectorWorkerMetadata):
    """Back to the scheduler part: per step, the requests whose lease a Read carried to the Manager (the others the
    scheduler releases itself), and the worker's counters since the last report."""

    taken: dict[int, set[str]] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)

    def aggregate(self, other: KVConnectorWorkerMetadata) -> KVConnectorWorkerMetadata:
        if not isinstance(other, OrbitKVWorkerMeta):
            return self
        for step, reqs in other.taken.items():
            self.taken.setdefault(step, set()).update(reqs)
        for name, value in other.counters.items():
            self.counters[name] = self.counters.get(name, 0) + value
        return self
