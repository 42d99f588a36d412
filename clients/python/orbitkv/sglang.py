"""OrbitKV as SGLang's HiCache storage tier (L3): `OrbitKVStorage`, loaded by SGLang's dynamic backend factory.

    python -m sglang.launch_server ... --enable-hierarchical-cache \\
        --hicache-storage-backend dynamic \\
        --hicache-storage-backend-extra-config '{"backend_name":"orbitkv","module_path":"orbitkv.sglang",
            "class_name":"OrbitKVStorage","dir":"/dev/shm/orbitkv/default","interface_v1":1}'

SGLang's page hashes (hex SHA-256 strings) are the block hashes, under a namespace that binds everything that changes
a page's bytes: the model, the TP/PP/attention-CP rank and size, the page size, the host pool's layout, class and
dtype and the bytes of one page. An engine of another model or rank never matches. One OrbitKV block holds one SGLang
page in the pool's own flat page order (`HostKVCache.get_data_page(index, flat=True)`), so the page-at-a-time
(`get`/`set`) and the zero-copy (`batch_get_v1`/`batch_set_v1`) interfaces read each other's blocks.

The zero-copy interface copies between SGLang's host pool and the Manager's data region with one strided tensor copy
per run of consecutive host pages (a view over the pool, a view over the region, no per-page Python copy) for the
MHA and MLA host pools' layouts; any other host pool goes page by page through its own flat-page methods.

Nothing here raises into SGLang: without a Manager (absent, killed, restarted) every call answers a miss (`False`,
`None`, 0) and the backend attaches again at most every `retry_attach_s`. See docs/engines.md.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import logging
import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

import torch

from sglang.srt.mem_cache.hicache_storage import HiCacheStorage, HiCacheStorageConfig

from . import Client, Lease, OrbitKVError, _native

logger = logging.getLogger(__name__)

DEFAULT_DIR = "/dev/shm/orbitkv/default"
# Data region of the attachment: pages move through it in chunks; at least REGION_MIN_PAGES pages of the pool.
DEFAULT_REGION_BYTES = 64 << 20
REGION_MIN_PAGES = 4
# Pinned lookups of `batch_exists` held for the `batch_get_v1` that follows; the oldest is released beyond this
# (extra-config key max_held_leases).
MAX_HELD_LEASES = 64
# A held lease not read within this many seconds is released (a prefetch SGLang revoked or cut short; extra-config
# key held_lease_ttl_s).
HELD_LEASE_TTL_S = 30.0
# Library statuses meaning the attachment is gone (docs/clients.md): no Manager, a stale or dead one, detached.
_GONE = frozenset((-2, -3, -4, -7, -8, -9, -11))
_STORED = frozenset(("STORED", "ALREADY_RESIDENT"))
# attachments of this process (a name is unique among a Manager's clients; a process may hold several backends)
_attachments = itertools.count(1)
_EXTRA_KEYS = frozenset(("backend_name", "module_path", "class_name", "interface_v1", "dir", "region_bytes",
                         "retry_attach_s", "timeout_ms", "namespace_salt", "max_held_leases",
                         "held_lease_ttl_s"))

COUNTERS = ("exists_queries", "exists_hits", "get_pages", "get_hit_pages", "set_pages", "stored_pages",
            "resident_pages", "failed_pages", "leases_held", "leases_released", "leases_dropped",
            "manager_unavailable", "errors", "bad_sizes")


def key_hash(key: str) -> bytes:
    """The block hash of an SGLang key: its bytes when it is hex of at most 64 bytes (SGLang's page hashes are hex
    SHA-256), else the SHA-256 of its UTF-8 text."""
    if len(key) % 2 == 0 and 2 <= len(key) <= 2 * _native.MAX_HASH_LENGTH:
        try:
            return bytes.fromhex(key)
        except ValueError:
            pass
    return hashlib.sha256(key.encode("utf-8")).digest()


def _page_view(pool: Any) -> torch.Tensor | None:
    """SGLang's host pool as bytes [page_num, ...] with page p's flat page (its `get_data_page(p * page_size)` order)
    at row p, a view without a copy; None for a pool whose layout has no such view (page by page then)."""
    buffer = getattr(pool, "kv_buffer", None)
    layout = getattr(pool, "layout", None)
    if not isinstance(buffer, torch.Tensor) or not buffer.is_contiguous() or buffer.device.type != "cpu":
        return None
    if getattr(pool, "dcp_size", 1) != 1:
        return None
    names = {cls.__name__ for cls in type(pool).__mro__}
    pages = int(getattr(pool, "page_num", 0))
    if pages <= 0 or buffer.numel() == 0:
        return None
    raw = buffer.view(torch.uint8)
    if "MHATokenToKVPoolHost" in names and type(pool).__name__ == "MHATokenToKVPoolHost" and buffer.shape[0] == 2:
        if layout == "layer_first":          # [2, layer, size, head, dim]
            return raw.reshape(2, buffer.shape[1], pages, -1).permute(2, 0, 1, 3)
        if layout in ("page_first", "page_first_direct", "page_head"):   # [2, page(token), ...]
            return raw.reshape(2, pages, -1).permute(1, 0, 2)
        return None
    if type(pool).__name__ == "MLATokenToKVPoolHost":
        if layout == "layer_first":          # [layer, size, 1, dim]
            return raw.reshape(buffer.shape[0], pages, -1).permute(1, 0, 2)
        if layout in ("page_first", "page_first_direct"):                # [size | page, ...]
            return raw.reshape(pages, -1)
    return None


def _answers(miss: Callable[..., Any]) -> Callable:
    """A method that never raises into SGLang: an unexpected error is logged, counted and answered with `miss(*args)`
    (the method's miss: False, 0, None or a list of them)."""
    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def guarded(self: "OrbitKVStorage", *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except Exception:  # noqa: BLE001 - SGLang's storage threads must never see one
                logger.exception("OrbitKV: %s failed", method.__name__)
                self.counters["errors"] += 1
                return miss(*args, **kwargs)
        return guarded
    return wrap


def _none(*_: Any, **__: Any) -> None:
    return None


def _false(*_: Any, **__: Any) -> bool:
    return False


def _zero(*_: Any, **__: Any) -> int:
    return 0


def _nones(keys: Sequence[str] = (), *_: Any, **__: Any) -> list[None]:
    return [None] * len(keys)


def _falses(keys: Sequence[str] = (), *_: Any, **__: Any) -> list[bool]:
    return [False] * len(keys)


def _runs(ids: Sequence[int]) -> list[tuple[int, int, int]]:
    """(position, first id, length) of each run of consecutive ids."""
    runs: list[tuple[int, int, int]] = []
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[i - 1] + 1:
            runs.append((start, ids[start], i - start))
            start = i
    return runs


class OrbitKVStorage(HiCacheStorage):
    """SGLang's HiCache L3 storage in the OrbitKV Manager on this host (one attachment per SGLang rank)."""

    def __init__(self, storage_config: HiCacheStorageConfig | None = None, kwargs: dict | None = None) -> None:
        self.storage_config = storage_config
        extra = dict((storage_config.extra_config if storage_config is not None else None) or {})
        unknown = sorted(set(extra) - _EXTRA_KEYS)
        if unknown:
            logger.warning("OrbitKV: extra-config keys %s are not OrbitKV's; ignored", unknown)
        self.dir = str(extra.get("dir", DEFAULT_DIR))
        self.region_bytes = int(extra.get("region_bytes", 0))
        self.retry_attach_s = float(extra.get("retry_attach_s", 5.0))
        self.timeout_ms = int(extra.get("timeout_ms", 10_000))
        self.salt = str(extra.get("namespace_salt", ""))
        self.max_held_leases = int(extra.get("max_held_leases", MAX_HELD_LEASES))
        self.held_lease_ttl_s = float(extra.get("held_lease_ttl_s", HELD_LEASE_TTL_S))
        if (self.region_bytes < 0 or self.retry_attach_s < 0 or self.timeout_ms < 1 or self.max_held_leases < 0
                or self.held_lease_ttl_s < 0):
            raise ValueError("OrbitKV: region_bytes, retry_attach_s, max_held_leases and held_lease_ttl_s >= 0, "
                             "timeout_ms >= 1")
        self.mem_pool_host: Any = None
        self.namespace: bytes = self._namespace_of(None)
        self.page_bytes = 0
        self._pages: torch.Tensor | None = None
        self._lock = threading.RLock()
        self._client: Client | None = None
        self._region: torch.Tensor | None = None
        self._next_attempt = 0.0
        self._warned = False
        # first hash of a pinned lookup's chain -> (its lease, its prefix length, when taken)
        self._held: OrderedDict[bytes, tuple[Lease, int, float]] = OrderedDict()
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.prefetch_pgs: list[int] = []
        self.backup_pgs: list[int] = []
        self.prefetch_bandwidth: list[float] = []
        self.backup_bandwidth: list[float] = []

    # -- identity --------------------------------------------------------------------------------------------------

    def _namespace_of(self, pool: Any) -> bytes:
        c = self.storage_config
        fields = [("model", (c.model_name if c is not None else None) or "unnamed")]
        if c is not None:
            fields += [("tp", f"{c.tp_rank}/{c.tp_size}"), ("pp", f"{c.pp_rank}/{c.pp_size}"),
                       ("cp", f"{c.attn_cp_rank}/{c.attn_cp_size}"), ("mla", str(int(c.is_mla_model)))]
            if c.dcp_size > 1:
                fields.append(("dcp", f"{c.dcp_rank}/{c.dcp_size}"))
        if pool is not None:
            fields += [("pool", type(pool).__name__), ("layout", str(getattr(pool, "layout", "?"))),
                       ("dtype", str(getattr(pool, "dtype", "?")).removeprefix("torch.")),
                       ("page", str(getattr(pool, "page_size", "?"))), ("pagebytes", str(self.page_bytes))]
            tag = getattr(pool, "storage_format_tag", None)
            if tag:
                fields.append(("format", str(tag)))
        if self.salt:
            fields.append(("salt", self.salt))
        namespace = "sglang;" + ";".join(f"{k}={v}" for k, v in fields)
        if len(namespace.encode()) > _native.MAX_NAMESPACE_LENGTH:
            namespace = "sglang;sha256=" + hashlib.sha256(namespace.encode()).hexdigest()
        return namespace.encode()

    def register_mem_pool_host(self, mem_pool_host: Any) -> None:
        with self._lock:
            super().register_mem_pool_host(mem_pool_host)
            page = mem_pool_host.get_data_page(0, flat=True)
            self.page_bytes = page.numel() * page.element_size()
            self._pages = _page_view(mem_pool_host)
            if self._pages is not None and self._pages[0].numel() != self.page_bytes:
                logger.warning("OrbitKV: %s's page view holds %d bytes, its pages %d: page by page",
                               type(mem_pool_host).__name__, self._pages[0].numel(), self.page_bytes)
                self._pages = None
            self.namespace = self._namespace_of(mem_pool_host)
            self._detach()  # the region is sized for the pages: attach anew
            logger.info("OrbitKV: %d bytes per page, %s, namespace %s", self.page_bytes,
                        "zero-copy runs" if self._pages is not None else "page by page", self.namespace.decode())

    # -- the attachment --------------------------------------------------------------------------------------------

    def _attach(self) -> Client | None:
        if self._client is not None:
            return self._client
        now = time.monotonic()
        if now < self._next_attempt:
            return None
        self._next_attempt = now + self.retry_attach_s
        region = self.region_bytes or max(DEFAULT_REGION_BYTES, REGION_MIN_PAGES * self.page_bytes)
        rank = self.storage_config.tp_rank if self.storage_config is not None else 0
        try:
            client = Client(dir=self.dir, name=f"sglang-{rank}-{os.getpid()}-{next(_attachments)}",
                            data_region_bytes=region, attach_timeout_ms=1000, response_timeout_ms=self.timeout_ms)
        except Exception as error:  # noqa: BLE001 - OrbitKVError, OSError, or the library missing: no Manager
            self.counters["manager_unavailable"] += 1
            if not self._warned:
                logger.warning("OrbitKV: no Manager at %s (%s); SGLang runs on without its L3 and OrbitKV tries "
                               "again every %.0f s", self.dir, error, self.retry_attach_s)
                self._warned = True
            return None
        self._client = client
        self._region = torch.frombuffer(client.data_region, dtype=torch.uint8)
        self._warned = False
        return client

    def _failed(self, error: Exception) -> None:
        self.counters["errors"] += 1
        if isinstance(error, OrbitKVError) and error.code in _GONE:
            self.counters["manager_unavailable"] += 1
            logger.warning("OrbitKV: the Manager at %s is gone (%s); SGLang runs on without it", self.dir, error)
            self._warned = True
            self._detach()
            self._next_attempt = time.monotonic() + self.retry_attach_s
        else:
            logger.warning("OrbitKV: %s", error)

    def _detach(self) -> None:
        client, self._client = self._client, None
        self._region = None
        self._held.clear()  # the Manager released this attachment's leases with it
        if client is not None:
            try:
                client.close()
            except OrbitKVError as error:
                logger.warning("OrbitKV: detach: %s", error)

    def close(self) -> None:
        with self._lock:
            self._release_held()
            self._detach()

    # -- leases ----------------------------------------------------------------------------------------------------

    def _hold(self, keys: list[bytes], lease: Lease, prefix: int) -> None:
        client = self._client
        old = self._held.pop(keys[0], None)
        if old is not None and client is not None:
            self._release(client, old[0])
        self._held[keys[0]] = (lease, prefix, time.monotonic())
        self.counters["leases_held"] += 1
        self._expire()

    def _expire(self) -> None:
        """Release the held leases beyond max_held_leases (oldest first) and those older than held_lease_ttl_s."""
        now = time.monotonic()
        while self._held and (len(self._held) > self.max_held_leases
                              or next(iter(self._held.values()))[2] + self.held_lease_ttl_s < now):
            _, (stale, _, _) = self._held.popitem(last=False)
            self.counters["leases_dropped"] += 1
            if self._client is not None:
                self._release(self._client, stale)

    def _take(self, hashes: list[bytes]) -> tuple[Lease | None, int]:
        """The held lease of a pinned lookup whose chain starts with `hashes` (taken out of the held set) and the
        pinned keys of `hashes`; (None, 0) without one."""
        held = self._held.pop(hashes[0], None) if hashes else None
        if held is None:
            return None, 0
        lease, prefix, _ = held
        n = min(len(hashes), prefix)
        if tuple(hashes[:n]) == lease.hashes[:n]:
            return lease, n
        if self._client is not None:
            self._release(self._client, lease)
        return None, 0

    def _release(self, client: Client, lease: Lease) -> None:
        try:
            client.release(lease)
            self.counters["leases_released"] += 1
        except OrbitKVError as error:
            if error.code != 15:  # UNKNOWN_LEASE: a read consumed it, or the Manager let it go
                self._failed(error)

    def _release_held(self) -> None:
        client = self._client
        while self._held:
            _, (lease, _, _) = self._held.popitem(last=False)
            if client is not None:
                self._release(client, lease)

    # -- lookups ---------------------------------------------------------------------------------------------------

    @_answers(_false)
    def exists(self, key: str) -> bool:
        return self._prefix([key], pin=False) == 1

    @_answers(_zero)
    def batch_exists(self, keys: list[str], extra_info: Any = None) -> int:
        """The number of leading keys the Manager holds; they stay pinned for the `batch_get_v1`/`batch_get` that
        follows (at most max_held_leases lookups, each for held_lease_ttl_s; leases_dropped counts the others)."""
        return self._prefix(keys, pin=True)

    def _prefix(self, keys: list[str], pin: bool) -> int:
        if not keys:
            return 0
        with self._lock:
            client = self._attach()
            if client is None:
                return 0
            hashes = [key_hash(k) for k in keys]
            try:
                found = client.lookup(self.namespace, hashes, pin=pin)
            except OrbitKVError as error:
                self._failed(error)
                return 0
            except Exception:  # noqa: BLE001 - never into SGLang
                logger.exception("OrbitKV: lookup failed")
                self.counters["errors"] += 1
                return 0
            self.counters["exists_queries"] += 1
            self.counters["exists_hits"] += found.prefix_len
            self._expire()
            if found.lease is not None:
                if found.prefix_len > 0:
                    self._hold(hashes, found.lease, found.prefix_len)
                else:
                    self._release(client, found.lease)
            return found.prefix_len

    # -- reads -----------------------------------------------------------------------------------------------------

    def _read(self, keys: list[str], sizes: list[int], deliver) -> int:  # noqa: ANN001
        """Restore the leading present pages of `keys` (page i of sizes[i] bytes) into the region chunk by chunk and
        hand each chunk to deliver(first, count, region bytes [count, size]); returns the pages delivered."""
        client = self._attach()
        if client is None or not keys:
            return 0
        hashes = [key_hash(k) for k in keys]
        lease, count = self._take(hashes)
        if lease is None:
            found = client.lookup(self.namespace, hashes, pin=True)
            lease = found.lease
            count = found.prefix_len
        region = self._region
        assert region is not None
        size = max(sizes) if sizes else 0
        per_chunk = len(region) // size if size > 0 else 0
        done = 0
        try:
            if count == 0 or per_chunk == 0:
                if per_chunk == 0:
                    logger.warning("OrbitKV: a page of %d bytes does not fit the data region of %d", size, len(region))
                return 0
            single = count <= per_chunk and lease is not None
            while done < count:
                n = min(per_chunk, count - done)
                ids = lease.all_ids() if single else ()
                result = client.read(self.namespace, hashes[done:done + n], [i * size for i in range(n)],
                                     sizes[done:done + n], lease_id=ids[0] if len(ids) == 1 else 0,
                                     lease_ids=ids if len(ids) > 1 else ())
                if single:
                    lease = None  # the read consumed it
                good = 0
                while good < result.restored and result.lengths[good] == sizes[done + good]:
                    good += 1
                if good < result.restored:
                    self.counters["bad_sizes"] += 1
                    logger.warning("OrbitKV: block of %d bytes where SGLang's page has %d: a miss",
                                   result.lengths[good], sizes[done + good])
                if good:
                    deliver(done, good, region[:good * size].view(good, size))
                done += good
                if good < n:
                    break
            return done
        finally:
            if lease is not None and self._client is client:  # a detached client's leases went with it
                self._release(client, lease)

    @_answers(_none)
    def get(self, key: str, target_location: Optional[Any] = None, target_sizes: Optional[Any] = None
            ) -> torch.Tensor | None:
        out = self.batch_get([key], [target_location] if target_location is not None else None,
                             [target_sizes] if target_sizes is not None else None)
        return out[0] if out else None

    @_answers(_nones)
    def batch_get(self, keys: list[str], target_locations: Optional[Any] = None, target_sizes: Optional[Any] = None
                  ) -> list[torch.Tensor | None]:
        """Each key's page into its target tensor (SGLang's flat page; a new byte tensor without one), None from the
        first missing page on."""
        count = len(keys)
        out: list[torch.Tensor | None] = [None] * count
        if count == 0:
            return out
        targets = list(target_locations) if target_locations is not None else [None] * count
        sizes = [t.numel() * t.element_size() if t is not None else (self.page_bytes or 0) for t in targets]
        if any(s <= 0 for s in sizes):
            # unknown sizes: a new byte tensor per page needs its length first
            return out

        def deliver(first: int, n: int, blocks: torch.Tensor) -> None:
            for i in range(n):
                target = targets[first + i]
                page = blocks[i, :sizes[first + i]]
                if target is None:
                    out[first + i] = page.clone()
                else:
                    target.view(-1).view(torch.uint8).copy_(page)
                    out[first + i] = target

        self._guarded_read(keys, sizes, deliver)
        return out

    def _guarded_read(self, keys: list[str], sizes: list[int], deliver) -> int:  # noqa: ANN001
        started = time.perf_counter()
        with self._lock:
            try:
                got = self._read(keys, sizes, deliver)
            except OrbitKVError as error:
                self._failed(error)
                got = 0
            except Exception:  # noqa: BLE001 - never into SGLang
                logger.exception("OrbitKV: read failed")
                self.counters["errors"] += 1
                got = 0
        self._count_get(len(keys), got, sum(sizes[:got]), started)
        return got

    @_answers(_falses)
    def batch_get_v1(self, keys: list[str], host_indices: torch.Tensor, extra_info: Any = None) -> list[bool]:
        """The pages of `keys` into SGLang's host pool at `host_indices` (page_size indices per key); True for each
        page restored, the restored ones a leading run."""
        pool = self.mem_pool_host
        count = len(keys)
        if pool is None or count == 0 or not self._indices_fit(host_indices, count):
            return [False] * count
        page_ids = self._page_ids(host_indices, count)
        pages = self._pages

        def deliver(first: int, n: int, blocks: torch.Tensor) -> None:
            if pages is not None:
                source = blocks.view((n,) + tuple(pages.shape[1:]))
                for at, page, length in _runs(page_ids[first:first + n]):
                    pages[page:page + length].copy_(source[at:at + length])
            else:
                for i in range(n):
                    pool.set_from_flat_data_page(page_ids[first + i] * pool.page_size,
                                                 blocks[i].view(pool.dtype))

        got = self._guarded_read(keys, [self.page_bytes] * count, deliver)
        return [i < got for i in range(count)]

    def _count_get(self, asked: int, got: int, nbytes: int, started: float) -> None:
        self.counters["get_pages"] += asked
        self.counters["get_hit_pages"] += got
        if got:
            self.prefetch_pgs.append(got)
            self.prefetch_bandwidth.append(nbytes / max(time.perf_counter() - started, 1e-9) / 1e9)

    # -- writes ----------------------------------------------------------------------------------------------------

    def _write(self, keys: list[str], sizes: list[int], fill) -> list[bool]:  # noqa: ANN001
        """Publish pages: fill(first, count, region bytes [count, size]) writes pages first..first+count-1 into the
        region; the region's two halves alternate so that one half fills while the Manager copies the other."""
        client = self._attach()
        count = len(keys)
        if client is None:
            return [False] * count
        hashes = [key_hash(k) for k in keys]
        ok = [False] * count
        # pages another rank or engine published already are not copied again
        resident = client.lookup(self.namespace, hashes).prefix_len
        for i in range(resident):
            ok[i] = True
        self.counters["resident_pages"] += resident
        region = self._region
        assert region is not None
        size = max(sizes)
        half = len(region) // 2
        per_chunk = half // size if size > 0 else 0
        if per_chunk == 0:
            per_chunk = len(region) // size if size > 0 else 0
            half = 0
        if per_chunk == 0:
            logger.warning("OrbitKV: a page of %d bytes does not fit the data region of %d", size, len(region))
            return ok
        tickets: list[tuple[Any, int, int] | None] = [None, None]
        chunk = 0
        first = resident
        try:
            while first < count:
                n = min(per_chunk, count - first)
                slot = chunk % 2 if half else 0
                self._finish(client, tickets, slot, ok)
                base = slot * half
                fill(first, n, region[base:base + n * size].view(n, size))
                ticket = client.submit_publish(self.namespace, hashes[first:first + n],
                                               [base + i * size for i in range(n)], sizes[first:first + n])
                tickets[slot] = (ticket, first, n)
                first += n
                chunk += 1
        finally:
            for slot in (0, 1):
                self._finish(client, tickets, slot, ok)
        return ok

    def _finish(self, client: Client, tickets: list, slot: int, ok: list[bool]) -> None:
        entry, tickets[slot] = tickets[slot], None
        if entry is None:
            return
        ticket, first, n = entry
        done = client.wait(ticket)
        for i, status in enumerate(done.statuses[:n]):
            ok[first + i] = status in _STORED
            self.counters["stored_pages" if status == "STORED" else
                          "resident_pages" if status == "ALREADY_RESIDENT" else "failed_pages"] += 1

    def _guarded_write(self, keys: list[str], sizes: list[int], fill) -> list[bool]:  # noqa: ANN001
        started = time.perf_counter()
        with self._lock:
            try:
                ok = self._write(keys, sizes, fill)
            except OrbitKVError as error:
                self._failed(error)
                ok = [False] * len(keys)
            except Exception:  # noqa: BLE001 - never into SGLang
                logger.exception("OrbitKV: write failed")
                self.counters["errors"] += 1
                ok = [False] * len(keys)
        self.counters["set_pages"] += len(keys)
        stored = sum(ok)
        if stored:
            self.backup_pgs.append(stored)
            nbytes = sum(s for s, good in zip(sizes, ok) if good)
            self.backup_bandwidth.append(nbytes / max(time.perf_counter() - started, 1e-9) / 1e9)
        return ok

    @_answers(_false)
    def set(self, key: str, value: Optional[Any] = None, target_location: Optional[Any] = None,
            target_sizes: Optional[Any] = None) -> bool:
        return self.batch_set([key], [value] if value is not None else None)

    @_answers(_false)
    def batch_set(self, keys: list[str], values: Optional[Any] = None, target_locations: Optional[Any] = None,
                  target_sizes: Optional[Any] = None) -> bool:
        """Store each key's page (a tensor, SGLang's flat page); True when every page is stored or was there."""
        if not keys or values is None or len(values) != len(keys):
            return False
        try:
            flat = [v.detach().reshape(-1).contiguous().view(torch.uint8) if isinstance(v, torch.Tensor)
                    else torch.frombuffer(bytearray(v), dtype=torch.uint8) for v in values]
        except Exception:  # noqa: BLE001 - a value we cannot read is a failed set, never an exception
            logger.exception("OrbitKV: set of a value that is not a tensor or bytes")
            self.counters["errors"] += 1
            return False
        sizes = [f.numel() for f in flat]
        if min(sizes) <= 0:
            return False

        def fill(first: int, n: int, blocks: torch.Tensor) -> None:
            for i in range(n):
                blocks[i, :sizes[first + i]].copy_(flat[first + i])

        return all(self._guarded_write(list(keys), sizes, fill))

    @_answers(_falses)
    def batch_set_v1(self, keys: list[str], host_indices: torch.Tensor, extra_info: Any = None) -> list[bool]:
        """Store the pages of SGLang's host pool at `host_indices` (page_size indices per key) under `keys`."""
        pool = self.mem_pool_host
        count = len(keys)
        if pool is None or count == 0 or not self._indices_fit(host_indices, count):
            return [False] * count
        page_ids = self._page_ids(host_indices, count)
        pages = self._pages

        def fill(first: int, n: int, blocks: torch.Tensor) -> None:
            if pages is not None:
                target = blocks.view((n,) + tuple(pages.shape[1:]))
                for at, page, length in _runs(page_ids[first:first + n]):
                    target[at:at + length].copy_(pages[page:page + length])
            else:
                for i in range(n):
                    page = pool.get_data_page(page_ids[first + i] * pool.page_size, flat=True)
                    blocks[i].copy_(page.reshape(-1).view(torch.uint8))

        return self._guarded_write(list(keys), [self.page_bytes] * count, fill)

    # -- helpers ---------------------------------------------------------------------------------------------------

    def _indices_fit(self, host_indices: torch.Tensor, count: int) -> bool:
        page = getattr(self.mem_pool_host, "page_size", 1) or 1
        if host_indices is None or host_indices.numel() < count * page or self.page_bytes <= 0:
            logger.warning("OrbitKV: %d keys but %s host indices", count,
                           None if host_indices is None else host_indices.numel())
            self.counters["errors"] += 1
            return False
        return True

    def _page_ids(self, host_indices: torch.Tensor, count: int) -> list[int]:
        page = getattr(self.mem_pool_host, "page_size", 1) or 1
        return (host_indices[: count * page: page] // page).tolist()

    @_answers(_false)
    def clear(self) -> bool:
        """Let go of the pins this backend holds. The Manager's blocks stay: other engines and ranks share them, and
        the Manager evicts them by its own policy."""
        with self._lock:
            self._release_held()
        return True

    @_answers(_none)
    def get_stats(self):  # noqa: ANN201 - SGLang's StorageMetrics
        from sglang.srt.observability.metrics_collector import StorageMetrics
        with self._lock:
            metrics = StorageMetrics()
            metrics.prefetch_pgs.extend(self.prefetch_pgs)
            metrics.backup_pgs.extend(self.backup_pgs)
            metrics.prefetch_bandwidth.extend(self.prefetch_bandwidth)
            metrics.backup_bandwidth.extend(self.backup_bandwidth)
            self.prefetch_pgs.clear()
            self.backup_pgs.clear()
            self.prefetch_bandwidth.clear()
            self.backup_bandwidth.clear()
            metrics.orbitkv = dict(self.counters)
            return metrics
