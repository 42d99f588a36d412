"""OrbitKV as an LMCache remote-storage plug-in: LMCache's chunks live in the OrbitKV Manager on this host.

Enabled in LMCache's configuration (docs/engines.md):

    remote_storage_plugins: ["orbitkv"]
    extra_config:
      remote_storage_plugin.orbitkv.module_path: orbitkv.lmcache
      remote_storage_plugin.orbitkv.class_name: OrbitKVConnector
      remote_storage_plugin.orbitkv.dir: /dev/shm/orbitkv/default

LMCache's `ConnectorManager` wraps the class in its `DynamicConnectorAdapter` and builds it as
`OrbitKVConnector(loop=, local_cpu_backend=, config=)`. A `CacheEngineKey` maps to one OrbitKV key: the namespace binds
the model, world size, worker id and KV dtype (and the key's tags), the block hash is the chunk hash. A stored block is
LMCache's remote metadata (length, memory format, shape and dtype per group) followed by the chunk's bytes; a get
allocates the MemoryObj from the local CPU backend by that metadata and copies the bytes in with one memcpy.

Every call to the Manager runs under one lock, on the plug-in's own thread for LMCache's coroutines. A Manager that is
absent or gone is a miss, a False, a zero or a skipped put, never an exception into LMCache; the plug-in attaches again
at most every `retry_attach_s`.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, TypeVar

from lmcache.utils import CacheEngineKey
from lmcache.v1.memory_management import MemoryObj
from lmcache.v1.protocol import RemoteMetadata
from lmcache.v1.storage_backend.connector.base_connector import RemoteConnector

from . import Client, Lease, OrbitKVError, _native, hash_from_int

logger = logging.getLogger(__name__)

__all__ = ["OrbitKVConnector", "PluginConfigError", "Settings", "namespace_of", "hash_of"]

PLUGIN_PREFIX = "remote_storage_plugin."
DEFAULT_DIR = "/dev/shm/orbitkv/default"
# Chunks the data region holds at once: the batch of one publish or one read.
DEFAULT_REGION_CHUNKS = 16
MAX_REGION_CHUNKS = _native.MAX_KEYS
# Pinned lookups (batched_async_contains with pin) waiting for their batched_get_non_blocking; beyond this the
# oldest lease is released (counted as `held_dropped`).
MAX_HELD_LOOKUPS = 256
# Keys this connector put that `list` reports (the Manager has no listing by namespace); beyond this the oldest is
# forgotten (counted as `list_forgotten`).
MAX_LISTED_KEYS = 65536
# Library statuses that mean the attachment is gone (docs/clients.md): no Manager, an incompatible or stale one, one
# that died, detached this client or stopped answering in the protocol.
_GONE = frozenset((-2, -3, -4, -7, -8, -9, -11))

T = TypeVar("T")


class PluginConfigError(ValueError):
    """A plug-in setting LMCache's extra_config gives that the plug-in cannot serve: raised at start, never later."""


@dataclass(frozen=True)
class Settings:
    """The plug-in's keys in LMCache's extra_config, each under `remote_storage_plugin.<name>.`."""

    dir: str = DEFAULT_DIR
    region_chunks: int = DEFAULT_REGION_CHUNKS
    retry_attach_s: float = 5.0
    timeout_ms: int = 10_000

    @staticmethod
    def parse(extra: dict[str, Any] | None, plugin: str) -> "Settings":
        prefix = f"{PLUGIN_PREFIX}{plugin}."
        ours = {k[len(prefix):]: v for k, v in (extra or {}).items() if k.startswith(prefix)}
        ours.pop("module_path", None)
        ours.pop("class_name", None)
        known = set(Settings.__dataclass_fields__)
        unknown = sorted(set(ours) - known)
        if unknown:
            raise PluginConfigError(f"unknown extra_config keys {[prefix + k for k in unknown]}; known: "
                                    f"{[prefix + k for k in sorted(known)]}")

        def value(name: str, kind: type, default: Any) -> Any:
            try:
                return kind(ours.get(name, default))
            except (TypeError, ValueError):
                raise PluginConfigError(f"{prefix}{name}: not a {kind.__name__}: {ours[name]!r}") from None

        settings = Settings(dir=value("dir", str, DEFAULT_DIR),
                            region_chunks=value("region_chunks", int, DEFAULT_REGION_CHUNKS),
                            retry_attach_s=value("retry_attach_s", float, 5.0),
                            timeout_ms=value("timeout_ms", int, 10_000))
        if not 1 <= settings.region_chunks <= MAX_REGION_CHUNKS:
            raise PluginConfigError(f"{prefix}region_chunks {settings.region_chunks} outside 1..{MAX_REGION_CHUNKS}")
        if settings.retry_attach_s < 0 or settings.timeout_ms < 1:
            raise PluginConfigError(f"{prefix}retry_attach_s must be >= 0 and {prefix}timeout_ms >= 1")
        return settings


def namespace_of(key: CacheEngineKey) -> bytes:
    """The OrbitKV namespace of an LMCache key: everything of the key but its chunk hash. Names longer than the
    Manager's limit are replaced by their SHA-256."""
    name = (f"lmcache;model={key.model_name};ws={key.world_size};worker={key.worker_id};"
            f"fmt={key._dtype_str}")
    if key.tags:
        name += ";tags=" + ",".join(f"{k}%{v}" for k, v in key.tags)
    raw = name.encode("utf-8")
    if len(raw) > _native.MAX_NAMESPACE_LENGTH:
        raw = b"lmcache;sha256=" + hashlib.sha256(raw).hexdigest().encode("ascii")
    return raw


def hash_of(key: CacheEngineKey) -> bytes:
    """The OrbitKV block hash of an LMCache key: a 64-bit chunk hash (LMCache's own, or Python's signed hash) as 8
    bytes little-endian; a digest (bytes) as it is; anything larger as its SHA-256."""
    value = key.chunk_hash
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)
        return raw if 1 <= len(raw) <= _native.MAX_HASH_LENGTH else hashlib.sha256(raw).digest()
    value = int(value)
    if -(1 << 63) <= value < (1 << 64):
        return hash_from_int(value)
    return hashlib.sha256(str(value).encode("ascii")).digest()


def _plugin_name(config: Any) -> str:
    """The remote_storage_plugins name whose module_path is this module (LMCache does not pass it to the class)."""
    extra = getattr(config, "extra_config", None) or {}
    names = [name for name in (getattr(config, "remote_storage_plugins", None) or [])
             if extra.get(f"{PLUGIN_PREFIX}{name}.module_path") == __name__]
    if len(names) > 1:
        raise PluginConfigError(f"remote_storage_plugins {names} all load {__name__}: one OrbitKV plug-in per engine")
    return names[0] if names else "orbitkv"


class OrbitKVConnector(RemoteConnector):
    """LMCache's `RemoteConnector` over the local OrbitKV Manager (see the module's documentation)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, local_cpu_backend: Any, config: Any,
                 plugin_name: str | None = None) -> None:
        super().__init__(local_cpu_backend.config, local_cpu_backend.metadata)
        self.loop = loop
        self.local_cpu_backend = local_cpu_backend
        self.plugin_name = plugin_name or _plugin_name(config if config is not None else local_cpu_backend.config)
        self.settings = Settings.parse(getattr(config, "extra_config", None), self.plugin_name)
        metadata = local_cpu_backend.metadata
        self._header_bytes = self.remote_metadata_bytes
        # one slot holds a full chunk with its metadata; partial chunks are smaller
        self._slot_bytes = self._header_bytes + self.full_chunk_size_bytes
        self._region_bytes = self._slot_bytes * self.settings.region_chunks
        # distinct between the engines of one process
        self._name = f"lmcache-{metadata.worker_id}-{os.getpid()}-{id(self):x}"
        self._lock = threading.RLock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="orbitkv-lmcache")
        self._client: Client | None = None
        self._region: memoryview | None = None
        self._next_attempt = 0.0
        self._warned = False
        self._epoch = 0
        self._held: collections.OrderedDict[str, tuple[int, Lease, bytes, tuple[bytes, ...]]] = (
            collections.OrderedDict())
        self._listed: collections.OrderedDict[tuple[bytes, bytes], str] = collections.OrderedDict()
        self._closed = False
        self.counters: collections.Counter[str] = collections.Counter()
        logger.info("OrbitKV LMCache plug-in %s: Manager at %s, %d chunk slots of %d bytes", self.plugin_name,
                    self.settings.dir, self.settings.region_chunks, self._slot_bytes)

    # -- the attachment --------------------------------------------------------------------------------------------

    def _attached(self) -> Client | None:
        """The client, attaching when it is time to try; None while the Manager is unavailable. Under the lock."""
        if self._client is not None or self._closed:
            return self._client
        now = time.monotonic()
        if now < self._next_attempt:
            return None
        self._next_attempt = now + self.settings.retry_attach_s
        try:
            client = Client(dir=self.settings.dir, name=self._name, data_region_bytes=self._region_bytes,
                            attach_timeout_ms=1000, response_timeout_ms=self.settings.timeout_ms)
        except (OrbitKVError, OSError) as error:
            self.counters["manager_unavailable"] += 1
            if not self._warned:
                logger.warning("OrbitKV: no Manager at %s (%s); LMCache runs on without it and tries again every "
                               "%.0f s", self.settings.dir, error, self.settings.retry_attach_s)
                self._warned = True
            return None
        if client.data_region_bytes < self._region_bytes:
            client.close()
            raise OrbitKVError(-1, f"data region of {client.data_region_bytes} bytes, need {self._region_bytes}")
        self._client = client
        self._region = client.data_region
        self._epoch += 1
        if self._warned:
            logger.warning("OrbitKV: attached to the Manager at %s again", self.settings.dir)
        self._warned = False
        return client

    def _failed(self, error: Exception, what: str) -> None:
        """A call failed: count it; let the client go when the Manager is gone. Under the lock."""
        self.counters["errors"] += 1
        if isinstance(error, OrbitKVError) and error.code in _GONE:
            self.counters["manager_unavailable"] += 1
            logger.warning("OrbitKV: the Manager at %s is gone (%s during %s); LMCache runs on without it",
                           self.settings.dir, error, what)
            self._warned = True
            self._detach()
            self._next_attempt = time.monotonic() + self.settings.retry_attach_s
        elif isinstance(error, OrbitKVError):
            logger.warning("OrbitKV: %s: %s", what, error)
        else:
            logger.exception("OrbitKV: %s failed", what)

    def _detach(self) -> None:
        client, self._client = self._client, None
        self._held.clear()  # leases belong to the attachment that took them
        self._region = None  # the client's own view: it releases it on close
        if client is not None:
            try:
                client.close()
            except OrbitKVError as error:
                logger.warning("OrbitKV: detach: %s", error)

    def _call(self, what: str, default: T, body: Callable[[Client], T]) -> T:
        """`body(client)` under the lock; `default` while the Manager is unavailable or when the call fails."""
        with self._lock:
            try:
                client = self._attached()
                if client is None:
                    return default
                return body(client)
            except Exception as error:  # noqa: BLE001 - LMCache sees a miss, never our exception
                self._failed(error, what)
                return default

    async def _off_loop(self, what: str, default: T, body: Callable[[Client], T]) -> T:
        if self._closed:
            return default
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, self._call, what, default, body)
        except RuntimeError:  # the executor shut down under a late call
            return default

    # -- keys ------------------------------------------------------------------------------------------------------

    @staticmethod
    def _chain(keys: Sequence[CacheEngineKey]) -> tuple[bytes, list[bytes]]:
        """The namespace of the first key and the hashes of the leading keys that share it (a prefix)."""
        if not keys:
            return b"", []
        ns = namespace_of(keys[0])
        hashes = []
        for key in keys:
            if key is not keys[0] and namespace_of(key) != ns:
                break
            hashes.append(hash_of(key))
        return ns, hashes

    def _prefix(self, client: Client, ns: bytes, hashes: list[bytes], pin: bool = False) -> tuple[int, Lease | None]:
        if not hashes:
            return 0, None
        found = client.lookup(ns, hashes, pin=pin)
        return found.prefix_len, found.lease

    # -- puts ------------------------------------------------------------------------------------------------------

    def _put_all(self, client: Client, keys: Sequence[CacheEngineKey], objs: Sequence[MemoryObj]) -> int:
        """Publish the chunks not yet resident, `region_chunks` at a time: one memcpy per chunk into its slot, one
        publish per batch. Returns the chunks stored."""
        stored = 0
        region = self._region
        assert region is not None
        by_ns: dict[bytes, list[tuple[bytes, CacheEngineKey, MemoryObj]]] = {}
        for key, obj in zip(keys, objs, strict=True):
            by_ns.setdefault(namespace_of(key), []).append((hash_of(key), key, obj))
        for ns, items in by_ns.items():
            # a chain already held (by another engine, or an earlier store) is not copied again
            resident = self._prefix(client, ns, [h for h, _, _ in items])[0]
            self.counters["put_resident"] += resident
            items = items[resident:]
            for first in range(0, len(items), self.settings.region_chunks):
                batch = items[first:first + self.settings.region_chunks]
                hashes, offsets, lengths = [], [], []
                for slot, (block_hash, key, obj) in enumerate(batch):
                    if self._arena_freed():
                        self.counters["put_after_close"] += 1
                        return stored
                    payload = memoryview(obj.byte_array).cast("B")
                    size = self._header_bytes + payload.nbytes
                    if size > self._slot_bytes:
                        self.counters["put_oversize"] += 1
                        logger.warning("OrbitKV: chunk %s of %d bytes exceeds a slot of %d: not stored",
                                       key.to_string(), payload.nbytes, self._slot_bytes - self._header_bytes)
                        continue
                    at = slot * self._slot_bytes
                    header = RemoteMetadata(payload.nbytes, obj.get_shapes(), obj.get_dtypes(),
                                            obj.get_memory_format())
                    header.serialize_into(region[at:at + self._header_bytes])
                    region[at + self._header_bytes:at + size] = payload  # one memcpy
                    hashes.append(block_hash)
                    offsets.append(at)
                    lengths.append(size)
                    self._remember(ns, block_hash, key)
                if hashes:
                    result = client.publish(ns, hashes, offsets, lengths)
                    stored += result.stored
                    self.counters["put_stored"] += result.stored
                    refused = [s for s in result.statuses if s not in ("STORED", "ALREADY_RESIDENT")]
                    if refused:
                        self.counters["put_refused"] += len(refused)
        return stored

    def _arena_freed(self) -> bool:
        """True once LMCache closed its local CPU backend, whose memory the chunks live in: LMCache's storage manager
        closes it before the remote backends, so a put still running at shutdown must not read the chunks."""
        return bool(getattr(getattr(self.local_cpu_backend, "memory_allocator", None), "_unregistered", False))

    def _remember(self, ns: bytes, block_hash: bytes, key: CacheEngineKey) -> None:
        listed = self._listed
        listed[(ns, block_hash)] = key.to_string()
        listed.move_to_end((ns, block_hash))
        while len(listed) > MAX_LISTED_KEYS:
            listed.popitem(last=False)
            self.counters["list_forgotten"] += 1

    async def put(self, key: CacheEngineKey, memory_obj: MemoryObj) -> None:
        # LMCache's wrapper drops the caller's reference after this returns
        await self._off_loop("put", 0, lambda c: self._put_all(c, [key], [memory_obj]))

    def support_batched_put(self) -> bool:
        return True

    async def batched_put(self, keys: list[CacheEngineKey], memory_objs: list[MemoryObj]) -> None:
        await self._off_loop("batched_put", 0, lambda c: self._put_all(c, keys, memory_objs))

    # -- gets ------------------------------------------------------------------------------------------------------

    def _get_prefix(self, client: Client, ns: bytes, hashes: list[bytes], lease: Lease | None = None,
                    known: int | None = None) -> list[MemoryObj]:
        """The MemoryObjs of the leading resident chunks: a pinned lookup (or the lease of one), reads of
        `region_chunks` chunks at a time into the region, one allocation and one memcpy out per chunk."""
        if lease is None:
            count, lease = self._prefix(client, ns, hashes, pin=True)
        else:
            count = known if known is not None else len(hashes)
        out: list[MemoryObj] = []
        try:
            region = self._region
            assert region is not None
            slots = self.settings.region_chunks
            for first in range(0, count, slots):
                batch = hashes[first:min(count, first + slots)]
                offsets = [i * self._slot_bytes for i in range(len(batch))]
                result = client.read(ns, batch, offsets, [self._slot_bytes] * len(batch))
                for i in range(result.restored):
                    obj = self._unpack(region, offsets[i], result.lengths[i])
                    if obj is None:
                        return out
                    out.append(obj)
                if result.restored < len(batch):
                    self.counters["get_short"] += 1
                    return out
            return out
        except BaseException:
            for obj in out:
                obj.ref_count_down()
            out = []
            raise
        finally:
            if lease is not None:
                try:
                    client.release(lease)
                except OrbitKVError as error:
                    if error.code not in _GONE:
                        logger.debug("OrbitKV: release: %s", error)
            self.counters["get_chunks"] += len(out)

    def _unpack(self, region: memoryview, at: int, length: int) -> MemoryObj | None:
        """A MemoryObj allocated from the local CPU backend by the stored metadata, holding the stored bytes."""
        try:
            header = RemoteMetadata.deserialize(bytes(region[at:at + self._header_bytes]))
            if length < self._header_bytes or header.length != length - self._header_bytes:
                raise ValueError(f"block of {length} bytes, its metadata says {header.length} + {self._header_bytes}")
        except Exception as error:  # noqa: BLE001 - a foreign or damaged block is a miss
            self.counters["get_malformed"] += 1
            logger.warning("OrbitKV: a stored chunk is not LMCache's (%s): treated as a miss", error)
            return None
        # no busy wait for memory under the lock: a chunk that finds no room is a miss
        obj = self.local_cpu_backend.allocate(header.shapes, header.dtypes, header.fmt, busy_loop=False)
        if obj is None:
            self.counters["get_no_memory"] += 1
            return None
        target = memoryview(obj.byte_array).cast("B")
        if target.nbytes != header.length:
            obj.ref_count_down()
            self.counters["get_malformed"] += 1
            logger.warning("OrbitKV: allocated %d bytes for a chunk of %d: treated as a miss", target.nbytes,
                           header.length)
            return None
        start = at + self._header_bytes
        target[:] = region[start:start + header.length]  # one memcpy
        return obj

    async def get(self, key: CacheEngineKey) -> Optional[MemoryObj]:
        found = await self._off_loop("get", [], lambda c: self._get_prefix(c, namespace_of(key), [hash_of(key)]))
        return found[0] if found else None

    def support_batched_get(self) -> bool:
        return True

    async def batched_get(self, keys: list[CacheEngineKey]) -> list[Optional[MemoryObj]]:
        """The chunks of the leading resident keys, then None for the rest (LMCache uses a prefix)."""
        ns, hashes = self._chain(keys)
        found: list[Optional[MemoryObj]] = list(
            await self._off_loop("batched_get", [], lambda c: self._get_prefix(c, ns, hashes)))
        return found + [None] * (len(keys) - len(found))

    def support_batched_get_non_blocking(self) -> bool:
        return True

    async def batched_get_non_blocking(self, lookup_id: str, keys: list[CacheEngineKey]) -> list[MemoryObj]:
        """The leading resident chunks, read under the pins of this lookup's `batched_async_contains` if it took
        them."""
        ns, hashes = self._chain(keys)

        def body(client: Client) -> list[MemoryObj]:
            held = self._held.pop(lookup_id, None)
            if held is not None:
                epoch, lease, held_ns, held_hashes = held
                if epoch == self._epoch and held_ns == ns and tuple(hashes[:len(held_hashes)]) == held_hashes:
                    return self._get_prefix(client, ns, list(held_hashes), lease, len(held_hashes))
                if epoch == self._epoch:
                    self._release_quietly(client, lease)
            return self._get_prefix(client, ns, hashes)

        return await self._off_loop("batched_get_non_blocking", [], body)

    # -- lookups ---------------------------------------------------------------------------------------------------

    async def exists(self, key: CacheEngineKey) -> bool:
        return await self._off_loop("exists", False,
                                    lambda c: self._prefix(c, namespace_of(key), [hash_of(key)])[0] == 1)

    def exists_sync(self, key: CacheEngineKey) -> bool:
        return self._call("exists_sync", False, lambda c: self._prefix(c, namespace_of(key), [hash_of(key)])[0] == 1)

    def support_batched_contains(self) -> bool:
        return True

    def batched_contains(self, keys: list[CacheEngineKey]) -> int:
        """How many leading keys the Manager holds (one lookup of the chain)."""
        ns, hashes = self._chain(keys)
        return self._call("batched_contains", 0, lambda c: self._prefix(c, ns, hashes)[0])

    def support_batched_async_contains(self) -> bool:
        return True

    async def batched_async_contains(self, lookup_id: str, keys: list[CacheEngineKey], pin: bool = False) -> int:
        """How many leading keys the Manager holds; with `pin`, holds them until this lookup's
        `batched_get_non_blocking` (at most MAX_HELD_LOOKUPS lookups are held, the oldest released first)."""
        ns, hashes = self._chain(keys)

        def body(client: Client) -> int:
            count, lease = self._prefix(client, ns, hashes, pin=pin)
            if lease is None:
                return count
            if count == 0:
                self._release_quietly(client, lease)
                return 0
            previous = self._held.pop(lookup_id, None)
            if previous is not None and previous[0] == self._epoch:
                self._release_quietly(client, previous[1])
            self._held[lookup_id] = (self._epoch, lease, ns, tuple(hashes[:count]))
            while len(self._held) > MAX_HELD_LOOKUPS:
                _, (epoch, oldest, _, _) = self._held.popitem(last=False)
                self.counters["held_dropped"] += 1
                if epoch == self._epoch:
                    self._release_quietly(client, oldest)
            return count

        return await self._off_loop("batched_async_contains", 0, body)

    def _release_quietly(self, client: Client, lease: Lease) -> None:
        try:
            client.release(lease)
        except OrbitKVError as error:
            if error.code in _GONE:
                raise
            logger.debug("OrbitKV: release: %s", error)

    def held_lookups(self) -> int:
        """Pinned lookups waiting for their get."""
        with self._lock:
            return len(self._held)

    # -- the rest --------------------------------------------------------------------------------------------------

    async def list(self) -> list[str]:
        """The keys this connector stored that the Manager still holds (the Manager lists no namespace; at most
        MAX_LISTED_KEYS are remembered)."""

        def body(client: Client) -> list[str]:
            listed = list(self._listed.items())
            out: list[str] = []
            for (ns, block_hash), name in listed:
                if client.lookup(ns, [block_hash]).prefix_len == 1:
                    out.append(name)
                else:
                    self._listed.pop((ns, block_hash), None)
            return out

        return await self._off_loop("list", [], body)

    def remove_sync(self, key: CacheEngineKey) -> bool:
        """The Manager evicts by its own policy; a client does not remove blocks."""
        return False

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counters)

    async def close(self) -> None:
        self.close_sync()

    def close_sync(self) -> None:
        self._closed = True  # calls from now on answer their defaults
        if not self._lock.acquire(timeout=self.settings.timeout_ms / 1000):
            logger.warning("OrbitKV: a call still runs at close; the client detaches when it is collected")
            self._executor.shutdown(wait=False)
            return
        try:
            client = self._client
            if client is not None:
                for _, lease, _, _ in self._held.values():
                    try:
                        client.release(lease)
                    except OrbitKVError:
                        pass
            self._detach()
        finally:
            self._lock.release()
        self._executor.shutdown(wait=False)

    def __repr__(self) -> str:
        return f"<OrbitKVConnector {self.plugin_name} dir={self.settings.dir}>"
