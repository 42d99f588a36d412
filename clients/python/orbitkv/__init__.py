"""OrbitKV from Python: attach to the Manager on this host and move KV-cache blocks through shared memory.

    import orbitkv
    with orbitkv.Client(dir="/dev/shm/orbitkv/default", name="vllm-0", data_region_bytes=1 << 30) as client:
        region = client.data_region                      # writable memoryview over the mapped data region
        region[0:4] = b"abcd"
        client.publish(b"model=x", [orbitkv.hash_from_int(42)], [0], [4])
        found = client.lookup(b"model=x", [orbitkv.hash_from_int(42)])
        assert found.prefix_len == 1

A chain longer than one request (`Client.max_keys` keys) is split into several, as the Java client splits it.
`put` and `get` move several blocks through a few slots of the data region, so that the Python-side copy of one
block overlaps the Manager's copy of another. Failures raise `OrbitKVError` with the
status code (the Manager's, > 0, or the library's, < 0) and its message. A Client may be shared by threads: the
C library serialises its calls. See docs/clients.md.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import struct
import sys
import threading
import uuid
from dataclasses import dataclass, field
from typing import Sequence

from . import _native

__all__ = [
    "Client",
    "OrbitKVError",
    "Lease",
    "LookupResult",
    "PackedHashes",
    "PeerCandidate",
    "PeerOwner",
    "PublishResult",
    "ReadResult",
    "Ticket",
    "hash_from_int",
    "state_key_bytes",
    "state_key_digest",
    "state_key_shard",
    "KEY_STATUS_NAMES",
    "PrepareResult",
]

KEY_STATUS_NAMES = (
    "MISS", "DRAM", "SSD", "STORED", "ALREADY_RESIDENT", "NO_SPACE", "DESTINATION_TOO_SMALL", "NOT_ATTEMPTED",
    "PEER", "FAILED", "RESERVED",
)

# Slots of the data region `put` and `get` cycle blocks through: one block copied by Python while the Manager copies
# the others (at most the Manager's 4 queued copies per client, MAX_IN_FLIGHT_PER_CLIENT).
PIPELINE_SLOTS = 3

_STATUS_OFFSET = _native.Result.status.offset
_LENGTH_OFFSET = _native.Result.length.offset

_lib_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def _library() -> ctypes.CDLL:
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = _native.load()
        return _lib


def hash_from_int(block_hash: int) -> bytes:
    """The canonical bytes of an engine's integer block hash: its low 64 bits, little-endian (8 bytes).

    The same conversion as okv_hash_from_u64 in C and BlockHashes.fromLong in Java; negative Python ints (such as
    vLLM's hash() values) are taken modulo 2**64.
    """
    return (block_hash & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little")


class PackedHashes:
    """Equal-length block hashes checked and packed once (`data`: back to back), for lookups of the same chain
    call after call (a scheduler asking again for a waiting request): `lookup` sends them without looking at each
    hash again. A sequence of the hashes' bytes."""

    __slots__ = ("data", "hash_length", "_count")

    def __init__(self, hashes: Sequence[bytes]) -> None:
        count = len(hashes)
        first = len(hashes[0]) if count else 0
        if count == 0 or not 1 <= first <= _native.MAX_HASH_LENGTH or any(len(h) != first for h in hashes):
            raise OrbitKVError(7, f"{count} hashes: packed hashes are 1..64 bytes, all of one length")
        try:
            self.data = b"".join(hashes)
        except TypeError:
            raise TypeError("hashes must be bytes") from None
        self.hash_length = first
        self._count = count

    @classmethod
    def from_ints(cls, block_hashes: Sequence[int]) -> "PackedHashes":
        """The canonical 8-byte hashes of integer block hashes (see `hash_from_int`), packed in one call."""
        packed = cls.__new__(cls)
        packed.data = struct.pack(f"<{len(block_hashes)}Q", *(h & 0xFFFF_FFFF_FFFF_FFFF for h in block_hashes))
        packed.hash_length = 8
        packed._count = len(block_hashes)
        if packed._count == 0:
            raise OrbitKVError(6, "no hashes")
        return packed

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> bytes:  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]  # type: ignore[return-value]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return self.data[index * self.hash_length:(index + 1) * self.hash_length]

    def __iter__(self):  # type: ignore[no-untyped-def]
        n = self.hash_length
        return (self.data[i:i + n] for i in range(0, len(self.data), n))


STATE_KEY_SHARD_COUNT = 16
STATE_KEY_SHARD_TAG = b"orbitkv/v1/state-key-shard"


def state_key_bytes(namespace: bytes, block_hash: bytes) -> bytes:
    """The canonical encoding of a StateKey: u16le(len(namespace)) || namespace || u8(len(hash)) || hash."""
    if not 1 <= len(namespace) <= _native.MAX_NAMESPACE_LENGTH or not 1 <= len(block_hash) <= _native.MAX_HASH_LENGTH:
        raise OrbitKVError(7, f"namespace of {len(namespace)} bytes (1..256) or hash of {len(block_hash)} (1..64)")
    return len(namespace).to_bytes(2, "little") + namespace + bytes([len(block_hash)]) + block_hash


def state_key_digest(namespace: bytes, block_hash: bytes) -> bytes:
    """SHA-256 over the shard domain tag, a zero byte and the canonical StateKey bytes."""
    return hashlib.sha256(STATE_KEY_SHARD_TAG + b"\x00" + state_key_bytes(namespace, block_hash)).digest()


def state_key_shard(namespace: bytes, block_hash: bytes) -> int:
    """The logical shard of a StateKey: the digest's first 8 bytes, big-endian, modulo 16 (as the Manager)."""
    return int.from_bytes(state_key_digest(namespace, block_hash)[:8], "big") % STATE_KEY_SHARD_COUNT


class OrbitKVError(Exception):
    """A failed call: `code` is the Manager's status (> 0) or the library's (< 0); `message` says why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _status_name(code: int) -> str:
    return _library().okv_strerror(code).decode("ascii", "replace")


def _status_names(raw: bytes) -> list[str]:
    return [KEY_STATUS_NAMES[s] if s < len(KEY_STATUS_NAMES) else f"UNKNOWN({s})" for s in raw]


def _statuses(result: _native.Result, count: int) -> list[str]:
    return _status_names(bytes(result.status)[:count])


def _as_bytes(value: bytes | bytearray | memoryview | str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


@dataclass(frozen=True)
class Lease:
    """Pins of a pinned lookup: pass to `read_lease` (which consumes it) or `release`. A chain longer than one request
    holds one lease per request sent (`lease_ids`, request i covering the keys from `lease_bases[i]`)."""

    lease_id: int
    namespace: bytes
    hashes: tuple[bytes, ...]
    lease_ids: tuple[int, ...] = ()
    lease_bases: tuple[int, ...] = ()

    def all_ids(self) -> tuple[int, ...]:
        return self.lease_ids or (self.lease_id,)


@dataclass(frozen=True)
class PublishResult:
    stored: int
    statuses: list[str]


@dataclass
class PrepareResult:
    """A Prepare's answer: per key its status (RESERVED, ALREADY_RESIDENT, NO_SPACE) and, for a RESERVED key, `slots[i]`:
    a writable memoryview of exactly the block's bytes in the Manager's pool (numpy/torch can copy into it); None for
    the others. Write every reserved slot, then `Client.commit`."""

    reserved: int
    statuses: list[str]
    slots: list[memoryview | None]


@dataclass(frozen=True)
class PeerOwner:
    """Another Manager holding copies of PEER keys: its runtime UUID and node id."""

    runtime_uuid: uuid.UUID
    node_id: str


@dataclass(frozen=True)
class PeerCandidate:
    """A copy of the PEER key `key_index` (index of the lookup's hashes) on `owner`, in its tier (DRAM or SSD)."""

    key_index: int
    owner: PeerOwner
    tier: str
    insertion_sequence: int
    length: int


class LookupResult:
    """`prefix_len` resident keys; per key its tier (`tiers`: DRAM, SSD, PEER, MISS, NOT_ATTEMPTED) and length.

    With the peers flag, `peer_candidates` lists the copies of PEER keys on other Managers (`candidates` counts them)
    and `owners` the distinct Managers they name. `lengths` and `tiers` are decoded on first use.
    """

    __slots__ = ("prefix_len", "lease", "candidates", "requests", "peer_candidates", "owners", "_status_bytes",
                 "_length_bytes", "_rows", "_count", "_lengths", "_tiers")

    def __init__(self, prefix_len: int, status_bytes: bytes, length_bytes: bytes | None, lease: Lease | None = None,
                 candidates: int = 0, requests: int = 1, peer_candidates: tuple[PeerCandidate, ...] = (),
                 owners: tuple[PeerOwner, ...] = (), count: int = -1) -> None:
        # count >= 0: status_bytes is the answer's rows from its status array through its lengths (one copy)
        self.prefix_len = prefix_len
        self._rows = status_bytes if count >= 0 else None
        self._count = count
        self._status_bytes = None if count >= 0 else status_bytes
        self._length_bytes = length_bytes
        self.lease = lease
        self.candidates = candidates
        self.requests = requests
        self.peer_candidates = peer_candidates
        self.owners = owners
        self._lengths: list[int] | None = None
        self._tiers: list[str] | None = None
        if count < 0 and length_bytes is None:
            raise ValueError("length_bytes required")

    @property
    def status_bytes(self) -> bytes:
        if self._status_bytes is None:
            self._status_bytes = self._rows[: self._count]
        return self._status_bytes

    @property
    def lengths(self) -> list[int]:
        if self._lengths is None:
            if self._length_bytes is None:
                at = _LENGTH_OFFSET - _STATUS_OFFSET
                self._length_bytes = self._rows[at:at + 4 * self._count]
            self._lengths = memoryview(self._length_bytes).cast("i").tolist()
        return self._lengths

    @property
    def tiers(self) -> list[str]:
        if self._tiers is None:
            self._tiers = _status_names(self.status_bytes)
        return self._tiers

    def __repr__(self) -> str:
        return (f"LookupResult(prefix_len={self.prefix_len}, tiers={self.tiers}, lengths={self.lengths}, "
                f"lease={self.lease}, candidates={self.candidates}, requests={self.requests})")


def _peer_detail(results: Sequence[_native.Result]) -> tuple[tuple[PeerCandidate, ...], tuple[PeerOwner, ...]]:
    """The candidates of the answers, each with its owner; owners named by several answers kept once (runtime UUID)."""
    owners: dict[uuid.UUID, PeerOwner] = {}
    candidates = []
    for result in results:
        answer_owners = []
        for i in range(result.owner_count):
            row = result.owners[i]
            key = uuid.UUID(int=((row.runtime_uuid_msb & 0xFFFF_FFFF_FFFF_FFFF) << 64) |
                            (row.runtime_uuid_lsb & 0xFFFF_FFFF_FFFF_FFFF))
            owner = owners.get(key)
            if owner is None:
                owner = owners[key] = PeerOwner(key, row.node_id[:row.node_id_length].decode("ascii", "replace"))
            answer_owners.append(owner)
        for i in range(result.candidate_count):
            row = result.candidates[i]
            tier = KEY_STATUS_NAMES[row.tier] if row.tier < len(KEY_STATUS_NAMES) else f"UNKNOWN({row.tier})"
            candidates.append(PeerCandidate(row.key_index, answer_owners[row.owner_index], tier,
                                            row.insertion_sequence, row.length))
    return tuple(candidates), tuple(owners.values())


@dataclass(frozen=True)
class ReadResult:
    restored: int
    statuses: list[str]
    lengths: list[int]


@dataclass
class Ticket:
    """An asynchronous lookup or read in flight; `Client.poll` or `Client.wait` completes it."""

    ticket_id: int
    kind: str
    namespace: bytes
    hashes: tuple[bytes, ...]
    pin: bool = False
    _keys: object = field(default=None, repr=False)


class Client:
    """One attachment to a Manager (a context manager: `with Client(...) as client`)."""

    def __init__(
        self,
        dir: str | None = None,
        name: str | None = None,
        data_region_bytes: int = 64 << 20,
        *,
        heartbeat_thread: bool = True,
        attach_timeout_ms: int = 0,
        response_timeout_ms: int = 0,
        heartbeat_interval_ms: int = 0,
    ) -> None:
        lib = _library()
        self._lib = lib
        options = _native.Options()
        lib.okv_options_init(ctypes.byref(options))
        self._dir_bytes = dir.encode() if dir is not None else None
        self._name_bytes = name.encode("ascii") if name is not None else None
        options.dir = self._dir_bytes
        options.name = self._name_bytes
        options.data_region_bytes = data_region_bytes
        options.attach_timeout_ms = attach_timeout_ms
        options.response_timeout_ms = response_timeout_ms
        options.heartbeat_interval_ms = heartbeat_interval_ms
        options.heartbeat_thread = 1 if heartbeat_thread else 0
        handle = ctypes.c_void_p()
        status = lib.okv_open(ctypes.byref(options), ctypes.byref(handle))
        if status != 0:
            detail = (lib.okv_open_error() or b"").decode("utf-8", "replace")
            raise OrbitKVError(status, f"attach to {dir}: {_status_name(status)}" + (f": {detail}" if detail else ""))
        self._handle: ctypes.c_void_p | None = handle
        self._result = _native.Result()
        self._result_ref = ctypes.byref(self._result)
        self._result_view = memoryview(self._result).cast("B")
        self._result_lock = threading.Lock()
        self._chain_results: ctypes.Array | None = None
        self._ns_key: object = None
        self._ns_bytes = b""
        size = lib.okv_data_region_bytes(handle)
        self._region_array = (ctypes.c_ubyte * size).from_address(lib.okv_data_region(handle))
        self._region = memoryview(self._region_array).cast("B")
        self._region_address: int = ctypes.addressof(self._region_array)
        pool_bytes = lib.okv_pool_bytes(handle)
        self._pool: memoryview | None = None
        if pool_bytes:
            self._pool_array = (ctypes.c_ubyte * pool_bytes).from_address(lib.okv_pool(handle))
            self._pool = memoryview(self._pool_array).cast("B")
        self.max_keys: int = lib.okv_max_keys_per_request(handle)
        self.client_id: int = lib.okv_client_id(handle)

    # -- life cycle ------------------------------------------------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Detach: the Manager releases this client's leases and data region. `data_region` is invalid after."""
        if self._handle is not None:
            # Views, slices or arrays (numpy, torch, ctypes) over the region keep the ctypes array that maps it
            # referenced: unmapping under them would leave them pointing at nothing, so the client stays attached.
            try:
                self._region.release()
            except BufferError:
                raise OrbitKVError(-1, "data_region is still exported (an array over it): drop it, then close()") from None
            if sys.getrefcount(self._region_array) > 2:  # our attribute and the call's argument
                self._region = memoryview(self._region_array).cast("B")
                raise OrbitKVError(-1, "data_region is still in use (a view or an array over it): drop it, then close()")
            if self._pool is not None:
                # As for the data region: a slot still exported or held keeps the pool mapped and the client attached.
                try:
                    self._pool.release()
                except BufferError:
                    raise OrbitKVError(-1, "a slot of the pool is still exported: drop it, then close()") from None
                if sys.getrefcount(self._pool_array) > 2:
                    self._pool = memoryview(self._pool_array).cast("B")
                    raise OrbitKVError(-1, "a slot of the pool is still in use: drop it, then close()")
                self._pool = None
            handle, self._handle = self._handle, None
            self._lib.okv_close(handle)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    @property
    def data_region(self) -> memoryview:
        """Writable memoryview over the mapped data region (no copy); numpy/torch can wrap it."""
        return self._region

    @property
    def pool(self) -> memoryview | None:
        """Writable memoryview over the Manager's whole pool when it lets engines save into it
        (`--engine-pool-access write-reserved`), else None. Writing outside this client's reserved slots corrupts other
        blocks; their checksums, taken at commit, keep that from spreading beyond this Manager's DRAM."""
        return self._pool

    def populate_pool(self) -> None:
        """Map every page of the pool into this process now, so that the first write into each slot takes no page
        fault (about a microsecond per 4 KiB page once; worth it for an engine that saves for a long time)."""
        if self._pool is None:
            raise OrbitKVError(18, "the Manager gives engines no pool access")
        status = self._lib.okv_pool_populate(self._live())
        if status != 0:
            self._raise(status, _native.Result())

    def prepare(self, namespace: bytes | str, hashes: Sequence[bytes], lengths: Sequence[int]) -> PrepareResult:
        """Zero-copy save, first half: reserve a pool slot of lengths[i] bytes for each block not resident yet. Copy
        each block into its slot (`PrepareResult.slots`), then `commit`; nothing is visible before, and a slot not
        committed within the client timeout, or when this client goes, is reclaimed. One request: at most `max_keys`
        blocks. Needs a Manager with `--engine-pool-access write-reserved` (OrbitKVError 18 otherwise)."""
        ns = self._namespace(namespace)
        keys = self._keys(hashes, None, lengths)
        count = len(hashes)
        with self._result_lock:
            result = self._result
            status = self._lib.okv_prepare(self._live(), ns, len(ns), keys, count, self._result_ref)
            if status != 0:
                self._raise(status, result)
            statuses = _statuses(result, result.key_count)
            pool = self._pool
            slots: list[memoryview | None] = []
            for i, name in enumerate(statuses):
                offset = result.pool_offset[i]
                slots.append(pool[offset:offset + lengths[i]] if name == "RESERVED" and pool is not None else None)
            return PrepareResult(result.value, statuses, slots)

    def commit(self, namespace: bytes | str, hashes: Sequence[bytes]) -> PublishResult:
        """Zero-copy save, second half: seal the blocks written into this client's reserved slots (STORED; MISS for a
        key without a reservation of this client). `stored` counts the blocks now visible."""
        ns = self._namespace(namespace)
        keys = self._keys(hashes, None, None)
        with self._result_lock:
            result = self._result
            status = self._lib.okv_commit(self._live(), ns, len(ns), keys, len(hashes), self._result_ref)
            if status != 0:
                self._raise(status, result)
            return PublishResult(result.value, _statuses(result, result.key_count))

    def submit_commit(self, namespace: bytes | str, hashes: Sequence[bytes]) -> Ticket:
        """`commit` as a ticket (`wait`/`poll` answer a PublishResult): commit each block as soon as it is written, and
        the Manager sums it while the next is being written."""
        ns = self._namespace(namespace)
        keys = self._keys(hashes, None, None)
        ticket = ctypes.c_int64()
        status = self._lib.okv_submit_commit(self._live(), ns, len(ns), keys, len(hashes), ctypes.byref(ticket))
        if status != 0:
            self._raise(status, _native.Result())
        return Ticket(ticket.value, "commit", ns, tuple(hashes), False, keys)

    def save(self, namespace: bytes | str, hashes: Sequence[bytes],
             blocks: Sequence[bytes | bytearray | memoryview]) -> PublishResult:
        """Zero-copy counterpart of `put`: prepare slots for the blocks not resident yet, copy each block into its slot
        and commit it at once, so that the Manager sums one block while the next is copied. Returns once every block
        is committed; `stored` counts them, ALREADY_RESIDENT blocks are skipped. Needs a Manager with
        `--engine-pool-access write-reserved`. At most `max_keys` blocks."""
        prepared = self.prepare(namespace, hashes, [len(b) for b in blocks])
        statuses = list(prepared.statuses)
        stored = 0
        pending: list[tuple[int, Ticket]] = []
        try:
            for i, slot in enumerate(prepared.slots):
                if slot is None:
                    continue
                slot[:] = blocks[i]
                pending.append((i, self.submit_commit(namespace, [hashes[i]])))
                prepared.slots[i] = None
                if len(pending) >= PIPELINE_SLOTS:
                    stored += self._finish_commit(pending.pop(0), statuses)
            slot = None
        finally:
            while pending:
                stored += self._finish_commit(pending.pop(0), statuses)
        return PublishResult(stored, statuses)

    def _finish_commit(self, entry: tuple[int, Ticket], statuses: list[str]) -> int:
        index, ticket = entry
        done = self.wait(ticket)
        statuses[index] = done.statuses[0]
        return done.stored

    @property
    def data_region_bytes(self) -> int:
        return len(self._region)

    def do_work(self) -> int:
        """Send a heartbeat when one is due (for clients made with heartbeat_thread=False). Returns 1 if sent."""
        return self._lib.okv_do_work(self._live())

    # -- requests --------------------------------------------------------------------------------------------------

    def _live(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise OrbitKVError(-9, "client closed")
        return self._handle

    def _keys(self, hashes: Sequence[bytes], offsets: Sequence[int] | None, lengths: Sequence[int] | None) -> ctypes.Array:
        count = len(hashes)
        if offsets is not None and len(offsets) != count or lengths is not None and len(lengths) != count:
            raise ValueError(f"{count} hashes but {len(offsets or ())} offsets and {len(lengths or ())} lengths")
        keys = (_native.Key * max(count, 1))()
        for i, h in enumerate(hashes):
            if not isinstance(h, (bytes, bytearray)):
                raise TypeError(f"hash {i} must be bytes, not {type(h).__name__}")
            key = keys[i]
            key.hash = bytes(h)
            key.hash_length = len(h)
            if offsets is not None:
                offset = offsets[i]
                if offset < 0:
                    raise OrbitKVError(8, f"key {i}: negative offset {offset}")
                key.offset = offset
            if lengths is not None:
                length = lengths[i]
                if length < 0 or length > 0x7FFF_FFFF:
                    raise OrbitKVError(8, f"key {i}: length {length} outside 0..2^31-1")
                key.length = length
        return keys

    @staticmethod
    def _lineage(count: int, parents: Sequence[bytes | None] | None,
                 token_ids: Sequence[Sequence[int] | None] | None) -> ctypes.Array:
        if parents is not None and len(parents) != count or token_ids is not None and len(token_ids) != count:
            raise ValueError(f"{count} hashes but {len(parents or ())} parents and {len(token_ids or ())} token lists")
        lineage = (_native.Lineage * max(count, 1))()
        for i in range(count):
            parent = parents[i] if parents is not None else None
            if parent:
                lineage[i].parent_hash = bytes(parent)
                lineage[i].parent_hash_length = len(parent)
            tokens = token_ids[i] if token_ids is not None else None
            if tokens is not None and len(tokens):
                array = (ctypes.c_int32 * len(tokens))(*tokens)
                lineage[i].token_ids = array
                lineage[i].token_count = len(tokens)
        return lineage

    def _raise(self, status: int, result: _native.Result) -> None:
        if status > 0 and result.message_length:
            message = result.message[: result.message_length].decode("ascii", "replace")
        else:
            last = self._lib.okv_last_error(self._handle) if self._handle is not None else b""
            message = (last or b"").decode("ascii", "replace") or _status_name(status)
        raise OrbitKVError(status, f"{_status_name(status).split(':')[0]}: {message}")

    def _namespace(self, namespace: bytes | str) -> bytes:
        # the same str namespace call after call is encoded once
        if namespace is self._ns_key:
            return self._ns_bytes
        ns = _as_bytes(namespace)
        if isinstance(namespace, (str, bytes)):
            self._ns_key, self._ns_bytes = namespace, ns
        return ns

    def _results(self, count: int) -> ctypes.Array:
        """The client's reusable answers of a chain (at least `count`); the caller holds the result lock."""
        if self._chain_results is None or len(self._chain_results) < count:
            self._chain_results = (_native.Result * max(count, 4))()
            for r in self._chain_results:
                r.size = ctypes.sizeof(_native.Result)
        return self._chain_results

    def _chain(self, call, ns: bytes, keys: ctypes.Array, count: int, *flags: object
               ) -> tuple[int, list[_native.Result]]:
        """Send a chain through `call` (an okv_*_chain function); the caller holds the result lock."""
        needed = self._lib.okv_chain_requests(self._live(), len(ns), keys, count)
        results = self._results(max(needed, 1))
        sent = ctypes.c_uint32()
        status = call(self._live(), ns, len(ns), keys, count, *flags, results, len(results), ctypes.byref(sent))
        answered = list(results[: sent.value])
        if status != 0:
            self._raise(status, answered[-1] if answered else results[0])
        return status, answered

    def publish(
        self,
        namespace: bytes | str,
        hashes: Sequence[bytes],
        offsets: Sequence[int],
        lengths: Sequence[int],
        parents: Sequence[bytes | None] | None = None,
        token_ids: Sequence[Sequence[int] | None] | None = None,
    ) -> PublishResult:
        """Store blocks placed in the data region: block i is [offsets[i], offsets[i] + lengths[i]).

        `parents[i]` (the hash of the block before block i in its chain) and `token_ids[i]` (the tokens whose KV it
        holds) are block i's lineage, which the Manager passes on in its KV events; either may be None. A publish
        with lineage takes at most `max_keys` blocks and one request's bytes (OrbitKVError status 6 otherwise)."""
        ns = self._namespace(namespace)
        keys = self._keys(hashes, offsets, lengths)
        count = len(hashes)
        if parents is not None or token_ids is not None:
            lineage = self._lineage(count, parents, token_ids)
            with self._result_lock:
                result = self._result
                status = self._lib.okv_publish_lineage(self._live(), ns, len(ns), keys, lineage, count,
                                                       self._result_ref)
                if status != 0:
                    self._raise(status, result)
                return PublishResult(result.value, _statuses(result, result.key_count))
        with self._result_lock:
            if count > self.max_keys:
                _, answers = self._chain(self._lib.okv_publish_chain, ns, keys, count)
                return PublishResult(sum(r.value for r in answers),
                                     [s for r in answers for s in _statuses(r, r.key_count)])
            result = self._result
            status = self._lib.okv_publish(self._live(), ns, len(ns), keys, count, self._result_ref)
            if status != 0:
                self._raise(status, result)
            return PublishResult(result.value, _statuses(result, result.key_count))

    def lookup(self, namespace: bytes | str, hashes: Sequence[bytes], pin: bool = False,
               peers: bool = False) -> LookupResult:
        """Longest resident prefix of the chain; with `pin` the prefix stays resident under `result.lease`. A chain
        longer than `max_keys` is sent as several requests and stops after the first whose prefix is short."""
        ns = self._namespace(namespace)
        count = len(hashes)
        if type(hashes) is PackedHashes and count <= self.max_keys and self._handle is not None:
            with self._result_lock:
                result = self._result
                status = self._lib.okv_lookup_packed(self._handle, ns, len(ns), hashes.data, hashes.hash_length,
                                                     count, pin, peers, self._result_ref)
                if status != 0:
                    self._raise(status, result)
                return self._lookup_result(result, ns, hashes, pin)
        if type(hashes) is PackedHashes:
            hashes = list(hashes)
        if 0 < count <= self.max_keys:
            # the fast path: equal-length bytes hashes in one buffer, no per-key ctypes structs (join refuses
            # non-bytes; the lengths are checked in one pass at C speed, a length over 255 fails the bytes())
            try:
                packed = b"".join(hashes)
                first = len(hashes[0])
                uniform = len(packed) == first * count and (count == 1 or bytes(map(len, hashes)) == bytes((first,)) * count)
            except (TypeError, ValueError):
                uniform = False
            handle = self._handle
            if uniform and 0 < first <= _native.MAX_HASH_LENGTH and handle is not None:
                with self._result_lock:
                    result = self._result
                    status = self._lib.okv_lookup_packed(handle, ns, len(ns), packed, first, count, pin, peers,
                                                         self._result_ref)
                    if status != 0:
                        self._raise(status, result)
                    return self._lookup_result(result, ns, hashes, pin)
        keys = self._keys(hashes, None, None)
        with self._result_lock:
            if count > self.max_keys:
                _, answers = self._chain(self._lib.okv_lookup_chain, ns, keys, count, int(pin), int(peers))
                return self._chain_lookup_result(answers, ns, hashes, pin)
            result = self._result
            status = self._lib.okv_lookup(self._live(), ns, len(ns), keys, count, int(pin), int(peers),
                                          self._result_ref)
            if status != 0:
                self._raise(status, result)
            return self._lookup_result(result, ns, hashes, pin)

    def _lookup_result(self, result: _native.Result, ns: bytes, hashes: Sequence[bytes], pin: bool) -> LookupResult:
        lease = None
        if pin and result.lease_id != 0:
            lease = Lease(result.lease_id, ns, tuple(bytes(h) for h in hashes))
        count = result.key_count
        view = self._result_view if result is self._result else memoryview(result).cast("B")
        # one copy of the rows in use (status, reason, lengths are adjacent); LookupResult slices it when asked
        rows = bytes(view[_STATUS_OFFSET:_LENGTH_OFFSET + 4 * count])
        found = LookupResult(result.value, rows, None, lease, result.candidate_count, count=count)
        if result.candidate_count or result.owner_count:
            found.peer_candidates, found.owners = _peer_detail([result])
        return found

    def _chain_lookup_result(self, answers: list[_native.Result], ns: bytes, hashes: Sequence[bytes],
                             pin: bool) -> LookupResult:
        statuses = bytearray()
        lengths = bytearray()
        for r in answers:
            view = memoryview(r).cast("B")
            statuses += view[_STATUS_OFFSET:_STATUS_OFFSET + r.key_count]
            lengths += view[_LENGTH_OFFSET:_LENGTH_OFFSET + 4 * r.key_count]
        # keys of requests never sent (after a short prefix) are NOT_ATTEMPTED, as the Java client answers
        missing = len(hashes) - len(statuses)
        statuses += bytes((KEY_STATUS_NAMES.index("NOT_ATTEMPTED"),)) * missing
        lengths += bytes(4 * missing)
        lease = None
        lease_ids = tuple(r.lease_id for r in answers)
        if pin and any(lease_ids):
            lease = Lease(next(i for i in lease_ids if i), ns, tuple(bytes(h) for h in hashes), lease_ids,
                          tuple(r.key_base for r in answers))
        candidates, owners = _peer_detail(answers)
        return LookupResult(sum(r.value for r in answers), bytes(statuses), bytes(lengths), lease,
                            len(candidates), len(answers), candidates, owners)

    def read(self, namespace: bytes | str, hashes: Sequence[bytes], offsets: Sequence[int],
             capacities: Sequence[int] | None = None, *, lease_id: int = 0,
             lease_ids: Sequence[int] = ()) -> ReadResult:
        """Restore the leading resident blocks into the data region at `offsets` (each at most its capacity,
        by default up to the next offset or the region's end). A chain longer than `max_keys` is sent as several
        requests, request i carrying `lease_ids[i]` (a chain's lease); the leases no request carried are released."""
        ns = self._namespace(namespace)
        if capacities is None:
            capacities = self._default_capacities(offsets)
        keys = self._keys(hashes, offsets, capacities)
        count = len(hashes)
        with self._result_lock:
            if count > self.max_keys or len(lease_ids) > 1:
                ids = list(lease_ids) if lease_ids else [lease_id]
                array = (ctypes.c_int64 * len(ids))(*ids)
                _, answers = self._chain(self._lib.okv_read_chain, ns, keys, count, array, len(ids))
                statuses = [s for r in answers for s in _statuses(r, r.key_count)]
                lengths = [n for r in answers for n in r.length[: r.key_count]]
                return ReadResult(sum(r.value for r in answers), statuses, lengths)
            result = self._result
            status = self._lib.okv_read(self._live(), ns, len(ns), keys, count,
                                        lease_ids[0] if lease_ids else lease_id, self._result_ref)
            if status != 0:
                self._raise(status, result)
            count = result.key_count
            return ReadResult(result.value, _statuses(result, count), list(result.length[:count]))

    def read_lease(self, lease: Lease, offsets: Sequence[int], capacities: Sequence[int] | None = None) -> ReadResult:
        """Read the blocks a pinned lookup holds; the read releases the lease (every lease of a chain)."""
        return self.read(lease.namespace, lease.hashes, offsets, capacities, lease_id=lease.lease_id,
                         lease_ids=lease.lease_ids)

    def release(self, lease: Lease | int) -> None:
        """Unpin a lease, or every lease of a chain (raises OrbitKVError UNKNOWN_LEASE (15) for one this client
        does not hold)."""
        ids = lease.all_ids() if isinstance(lease, Lease) else (int(lease),)
        failure: tuple[int, _native.Result] | None = None
        with self._result_lock:
            for lease_id in ids:
                if lease_id == 0:
                    continue
                result = _native.Result()
                status = self._lib.okv_release(self._live(), lease_id, ctypes.byref(result))
                if status != 0 and failure is None:
                    failure = (status, result)
            if failure is not None:
                self._raise(*failure)

    def _default_capacities(self, offsets: Sequence[int]) -> list[int]:
        region = len(self._region)
        ordered = sorted(set(offsets))
        following = {o: (ordered[i + 1] if i + 1 < len(ordered) else region) for i, o in enumerate(ordered)}
        return [max(0, min(following[o] - o, 0x7FFF_FFFF)) for o in offsets]

    # -- copies ----------------------------------------------------------------------------------------------------

    def _slots(self, offset: int, slot_bytes: int, count: int, what: str) -> int:
        """Slots of slot_bytes from `offset` that the region holds, at most PIPELINE_SLOTS and `count`."""
        room = len(self._region) - offset
        slots = min(PIPELINE_SLOTS, count, room // slot_bytes if slot_bytes > 0 and offset >= 0 else 0)
        if offset < 0 or slots < 1:
            raise OrbitKVError(8, f"{what}: a slot of {slot_bytes} bytes does not fit the data region from {offset}")
        return slots

    def put(self, namespace: bytes | str, hashes: Sequence[bytes], blocks: Sequence[bytes | bytearray | memoryview],
            offset: int = 0) -> PublishResult:
        """Copy blocks into the data region and publish them; returns once every block is published and visible.

        The blocks go through up to PIPELINE_SLOTS slots of the region from `offset` (each as large as the largest
        block), one publish per block: block i+1 is copied in while the Manager copies block i into its pool. The
        caller must not write those slots during the call.
        """
        if len(blocks) != len(hashes):
            raise ValueError(f"{len(hashes)} hashes but {len(blocks)} blocks")
        count = len(blocks)
        if count == 0:
            return PublishResult(0, [])
        sizes = [block.nbytes if isinstance(block, memoryview) else len(block) for block in blocks]
        slot_bytes = max(sizes)
        slots = self._slots(offset, slot_bytes, count, "put")
        ns = self._namespace(namespace)
        region = self._region
        if count == 1:
            region[offset:offset + sizes[0]] = blocks[0]
            return self.publish(ns, hashes, [offset], sizes)
        tickets: list[Ticket | None] = [None] * slots
        stored = 0
        statuses: list[str] = []
        failure: OrbitKVError | None = None
        try:
            for i, block in enumerate(blocks):
                slot = i % slots
                if tickets[slot] is not None:
                    ticket, tickets[slot] = tickets[slot], None
                    done = self.wait(ticket)
                    stored += done.stored
                    statuses += done.statuses
                at = offset + slot * slot_bytes
                region[at:at + sizes[i]] = block  # one memcpy from the caller's buffer
                tickets[slot] = self.submit_publish(ns, [hashes[i]], [at], [sizes[i]])
        except OrbitKVError as error:
            failure = error
        finally:
            # the slots' publishes in flight complete in submission order; none is left behind on an error
            for k in range(slots):
                ticket = tickets[(count + k) % slots]
                if ticket is None:
                    continue
                try:
                    done = self.wait(ticket)
                    stored += done.stored
                    statuses += done.statuses
                except OrbitKVError as error:
                    failure = failure or error
        if failure is not None:
            raise failure
        return PublishResult(stored, statuses)

    def get(self, namespace: bytes | str, hashes: Sequence[bytes], offset: int = 0) -> list[bytes]:
        """Restore the resident prefix of the chain and return copies of its blocks (shorter than `hashes` at a
        miss). Block sizes come from a pinned lookup, which holds the blocks until the last is read; the blocks go
        through up to PIPELINE_SLOTS slots of the region from `offset`, so that the copy out of block i overlaps the
        Manager's copy of block i+1."""
        ns = self._namespace(namespace)
        found = self.lookup(ns, hashes, pin=True)
        count = found.prefix_len
        lease = found.lease
        if count == 0:
            if lease is not None:
                self.release(lease)
            return []
        lengths = found.lengths[:count]
        try:
            slots = self._slots(offset, max(lengths), count, "get")
        except OrbitKVError:
            if lease is not None:
                self.release(lease)
            raise
        slot_bytes = max(lengths)
        ids = lease.all_ids() if lease is not None else ()
        # one lease: the last read carries it (the Manager releases it once that read completes); a chain's leases
        # are released after the last read
        last_lease = ids[0] if len(ids) == 1 else 0
        region = self._region
        out: list[bytes] = []
        tickets: list[Ticket | None] = [None] * slots
        failure: OrbitKVError | None = None
        short = False
        submitted = 0
        try:
            for i in range(count + slots):
                slot = i % slots
                if tickets[slot] is not None:
                    ticket, tickets[slot] = tickets[slot], None
                    done = self.wait(ticket)
                    if done.restored == 1 and not short:
                        at = offset + slot * slot_bytes
                        out.append(bytes(region[at:at + done.lengths[0]]))  # one copy out
                    else:
                        short = True
                if i < count and not short:
                    at = offset + slot * slot_bytes
                    lease_id = last_lease if i == count - 1 else 0
                    tickets[slot] = self.submit_read(ns, [hashes[i]], [at], [lengths[i]], lease_id=lease_id)
                    submitted = i + 1
        except OrbitKVError as error:
            failure = error
            for ticket in tickets:
                if ticket is not None:
                    try:
                        self.wait(ticket)
                    except OrbitKVError:
                        pass
        finally:
            if lease is not None and (len(ids) > 1 or submitted < count or failure is not None):
                try:
                    self.release(lease)
                except OrbitKVError:
                    pass  # the last read consumed it already
        if failure is not None:
            raise failure
        return out

    # -- asynchronous ----------------------------------------------------------------------------------------------

    def submit_lookup(self, namespace: bytes | str, hashes: Sequence[bytes], pin: bool = False,
                      peers: bool = False) -> Ticket:
        ns = self._namespace(namespace)
        keys = self._keys(hashes, None, None)
        ticket = ctypes.c_int64()
        status = self._lib.okv_submit_lookup(self._live(), ns, len(ns), keys, len(hashes), int(pin), int(peers),
                                             ctypes.byref(ticket))
        if status != 0:
            self._raise(status, _native.Result())
        return Ticket(ticket.value, "lookup", ns, tuple(hashes), pin, keys)

    def submit_read(self, namespace: bytes | str, hashes: Sequence[bytes], offsets: Sequence[int],
                    capacities: Sequence[int] | None = None, *, lease_id: int = 0) -> Ticket:
        ns = self._namespace(namespace)
        keys = self._keys(hashes, offsets, capacities if capacities is not None else self._default_capacities(offsets))
        ticket = ctypes.c_int64()
        status = self._lib.okv_submit_read(self._live(), ns, len(ns), keys, len(hashes), lease_id,
                                           ctypes.byref(ticket))
        if status != 0:
            self._raise(status, _native.Result())
        return Ticket(ticket.value, "read", ns, tuple(hashes), False, keys)

    def submit_publish(self, namespace: bytes | str, hashes: Sequence[bytes], offsets: Sequence[int],
                       lengths: Sequence[int], parents: Sequence[bytes | None] | None = None,
                       token_ids: Sequence[Sequence[int] | None] | None = None) -> Ticket:
        """A publish as a ticket: the blocks' ranges must not be written until `wait`/`poll` completes it. `parents`
        and `token_ids` as for `publish`."""
        ns = self._namespace(namespace)
        keys = self._keys(hashes, offsets, lengths)
        ticket = ctypes.c_int64()
        if parents is not None or token_ids is not None:
            lineage = self._lineage(len(hashes), parents, token_ids)
            status = self._lib.okv_submit_publish_lineage(self._live(), ns, len(ns), keys, lineage, len(hashes),
                                                          ctypes.byref(ticket))
        else:
            status = self._lib.okv_submit_publish(self._live(), ns, len(ns), keys, len(hashes), ctypes.byref(ticket))
        if status != 0:
            self._raise(status, _native.Result())
        return Ticket(ticket.value, "publish", ns, tuple(hashes), False, keys)

    def poll(self, ticket: Ticket) -> LookupResult | ReadResult | PublishResult | None:
        """The ticket's answer if it is in (the ticket is then done), else None."""
        result = _native.Result()
        status = self._lib.okv_poll(self._live(), ticket.ticket_id, ctypes.byref(result))
        if status == _native.E_PENDING:
            return None
        return self._ticket_result(ticket, status, result)

    def wait(self, ticket: Ticket, timeout_ms: int = -1) -> LookupResult | ReadResult | PublishResult:
        """Block until the ticket's answer is in (at most timeout_ms; -1: the response timeout)."""
        result = _native.Result()
        status = self._lib.okv_wait(self._live(), ticket.ticket_id, timeout_ms, ctypes.byref(result))
        return self._ticket_result(ticket, status, result)

    def _ticket_result(self, ticket: Ticket, status: int, result: _native.Result
                       ) -> LookupResult | ReadResult | PublishResult:
        if status != 0:
            self._raise(status, result)
        if ticket.kind == "lookup":
            return self._lookup_result(result, ticket.namespace, ticket.hashes, ticket.pin)
        count = result.key_count
        if ticket.kind in ("publish", "commit"):
            return PublishResult(result.value, _statuses(result, count))
        return ReadResult(result.value, _statuses(result, count), list(result.length[:count]))
