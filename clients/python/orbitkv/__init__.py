"""OrbitKV from Python: attach to the Manager on this host and move KV-cache blocks through shared memory.

    import orbitkv
    with orbitkv.Client(dir="/dev/shm/orbitkv/default", name="vllm-0", data_region_bytes=1 << 30) as client:
        region = client.data_region                      # writable memoryview over the mapped data region
        region[0:4] = b"abcd"
        client.publish(b"model=x", [orbitkv.hash_from_int(42)], [0], [4])
        found = client.lookup(b"model=x", [orbitkv.hash_from_int(42)])
        assert found.prefix_len == 1

Every call is one request to the Manager (at most `Client.max_keys` keys). Failures raise `OrbitKVError` with the
status code (the Manager's, > 0, or the library's, < 0) and its message. A Client may be shared by threads: the
C library serialises its calls. See docs/clients.md.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import sys
import threading
from dataclasses import dataclass, field
from typing import Sequence

from . import _native

__all__ = [
    "Client",
    "OrbitKVError",
    "Lease",
    "LookupResult",
    "PublishResult",
    "ReadResult",
    "Ticket",
    "hash_from_int",
    "state_key_bytes",
    "state_key_digest",
    "state_key_shard",
    "KEY_STATUS_NAMES",
]

KEY_STATUS_NAMES = (
    "MISS", "DRAM", "SSD", "STORED", "ALREADY_RESIDENT", "NO_SPACE", "DESTINATION_TOO_SMALL", "NOT_ATTEMPTED",
    "PEER", "FAILED",
)

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
    """Pins of a pinned lookup: pass to `read_lease` (which consumes it) or `release`."""

    lease_id: int
    namespace: bytes
    hashes: tuple[bytes, ...]


@dataclass(frozen=True)
class PublishResult:
    stored: int
    statuses: list[str]


@dataclass(frozen=True)
class LookupResult:
    """`prefix_len` resident keys; per key its tier (`tiers`: DRAM, SSD, PEER, MISS, NOT_ATTEMPTED) and length."""

    prefix_len: int
    lengths: list[int]
    lease: Lease | None = None
    candidates: int = 0
    status_bytes: bytes = b""

    @functools.cached_property
    def tiers(self) -> list[str]:
        return _status_names(self.status_bytes)


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
            raise OrbitKVError(status, f"attach to {dir}: {_status_name(status)}")
        self._handle: ctypes.c_void_p | None = handle
        self._result = _native.Result()
        self._result_lock = threading.Lock()
        size = lib.okv_data_region_bytes(handle)
        self._region_array = (ctypes.c_ubyte * size).from_address(lib.okv_data_region(handle))
        self._region = memoryview(self._region_array).cast("B")
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

    def _raise(self, status: int, result: _native.Result) -> None:
        if status > 0 and result.message_length:
            message = result.message[: result.message_length].decode("ascii", "replace")
        else:
            last = self._lib.okv_last_error(self._handle) if self._handle is not None else b""
            message = (last or b"").decode("ascii", "replace") or _status_name(status)
        raise OrbitKVError(status, f"{_status_name(status).split(':')[0]}: {message}")

    def publish(
        self,
        namespace: bytes | str,
        hashes: Sequence[bytes],
        offsets: Sequence[int],
        lengths: Sequence[int],
    ) -> PublishResult:
        """Store blocks placed in the data region: block i is [offsets[i], offsets[i] + lengths[i])."""
        ns = _as_bytes(namespace)
        keys = self._keys(hashes, offsets, lengths)
        with self._result_lock:
            result = self._result
            status = self._lib.okv_publish(self._live(), ns, len(ns), keys, len(hashes), ctypes.byref(result))
            if status != 0:
                self._raise(status, result)
            return PublishResult(result.value, _statuses(result, result.key_count))

    def lookup(self, namespace: bytes | str, hashes: Sequence[bytes], pin: bool = False,
               peers: bool = False) -> LookupResult:
        """Longest resident prefix of the chain; with `pin` the prefix stays resident under `result.lease`."""
        ns = _as_bytes(namespace)
        count = len(hashes)
        first = len(hashes[0]) if count else 0
        packed = None
        if 0 < first <= _native.MAX_HASH_LENGTH and len(set(map(len, hashes))) == 1:
            # one buffer of equal-length hashes: no per-key ctypes structs to build (join refuses non-bytes)
            try:
                packed = b"".join(hashes)
            except TypeError:
                raise TypeError("hashes must be bytes") from None
        with self._result_lock:
            result = self._result
            if packed is not None:
                status = self._lib.okv_lookup_packed(self._live(), ns, len(ns), packed, first, count, int(pin),
                                                     int(peers), ctypes.byref(result))
            else:
                keys = self._keys(hashes, None, None)
                status = self._lib.okv_lookup(self._live(), ns, len(ns), keys, count, int(pin), int(peers),
                                              ctypes.byref(result))
            if status != 0:
                self._raise(status, result)
            return self._lookup_result(result, ns, hashes, pin)

    @staticmethod
    def _lookup_result(result: _native.Result, ns: bytes, hashes: Sequence[bytes], pin: bool) -> LookupResult:
        lease = None
        if pin and result.lease_id != 0:
            lease = Lease(result.lease_id, ns, tuple(bytes(h) for h in hashes))
        count = result.key_count
        return LookupResult(result.value, result.length[:count], lease, result.candidate_count,
                            bytes(result.status)[:count])

    def read(self, namespace: bytes | str, hashes: Sequence[bytes], offsets: Sequence[int],
             capacities: Sequence[int] | None = None, *, lease_id: int = 0) -> ReadResult:
        """Restore the leading resident blocks into the data region at `offsets` (each at most its capacity,
        by default up to the next offset or the region's end)."""
        ns = _as_bytes(namespace)
        if capacities is None:
            capacities = self._default_capacities(offsets)
        keys = self._keys(hashes, offsets, capacities)
        with self._result_lock:
            result = self._result
            status = self._lib.okv_read(self._live(), ns, len(ns), keys, len(hashes), lease_id, ctypes.byref(result))
            if status != 0:
                self._raise(status, result)
            count = result.key_count
            return ReadResult(result.value, _statuses(result, count),
                              list(result.length[:count]))

    def read_lease(self, lease: Lease, offsets: Sequence[int], capacities: Sequence[int] | None = None) -> ReadResult:
        """Read the blocks a pinned lookup holds; the read releases the lease."""
        return self.read(lease.namespace, lease.hashes, offsets, capacities, lease_id=lease.lease_id)

    def release(self, lease: Lease | int) -> None:
        """Unpin a lease (raises OrbitKVError UNKNOWN_LEASE (15) for one this client does not hold)."""
        lease_id = lease.lease_id if isinstance(lease, Lease) else int(lease)
        with self._result_lock:
            result = self._result
            status = self._lib.okv_release(self._live(), lease_id, ctypes.byref(result))
            if status != 0:
                self._raise(status, result)

    def _default_capacities(self, offsets: Sequence[int]) -> list[int]:
        region = len(self._region)
        ordered = sorted(set(offsets))
        following = {o: (ordered[i + 1] if i + 1 < len(ordered) else region) for i, o in enumerate(ordered)}
        return [max(0, min(following[o] - o, 0x7FFF_FFFF)) for o in offsets]

    # -- copies ----------------------------------------------------------------------------------------------------

    def put(self, namespace: bytes | str, hashes: Sequence[bytes], blocks: Sequence[bytes | bytearray | memoryview],
            offset: int = 0) -> PublishResult:
        """Copy blocks into the data region one after another from `offset`, then publish them."""
        if len(blocks) != len(hashes):
            raise ValueError(f"{len(hashes)} hashes but {len(blocks)} blocks")
        offsets = []
        lengths = []
        at = offset
        region = self._region
        for block in blocks:
            size = len(block) if not isinstance(block, memoryview) else block.nbytes
            if at < 0 or at + size > len(region):
                raise OrbitKVError(8, f"blocks of {at + size - offset} bytes do not fit the data region from {offset}")
            region[at:at + size] = block
            offsets.append(at)
            lengths.append(size)
            at += size
        return self.publish(namespace, hashes, offsets, lengths)

    def get(self, namespace: bytes | str, hashes: Sequence[bytes], offset: int = 0) -> list[bytes]:
        """Restore the resident prefix of the chain and return copies of its blocks (shorter than `hashes` at a
        miss). Block sizes come from a pinned lookup, whose lease the read consumes."""
        found = self.lookup(namespace, hashes, pin=True)
        count = found.prefix_len
        if count == 0:
            if found.lease is not None:
                self.release(found.lease)
            return []
        offsets = []
        at = offset
        for i in range(count):
            offsets.append(at)
            at += found.lengths[i]
        if at > len(self._region):
            if found.lease is not None:
                self.release(found.lease)
            raise OrbitKVError(8, f"{at - offset} bytes do not fit the data region from {offset}")
        ns = _as_bytes(namespace)
        lease_id = found.lease.lease_id if found.lease is not None else 0
        done = self.read(ns, list(hashes[:count]), offsets, found.lengths[:count], lease_id=lease_id)
        region = self._region
        return [bytes(region[offsets[i]:offsets[i] + done.lengths[i]]) for i in range(done.restored)]

    # -- asynchronous ----------------------------------------------------------------------------------------------

    def submit_lookup(self, namespace: bytes | str, hashes: Sequence[bytes], pin: bool = False,
                      peers: bool = False) -> Ticket:
        ns = _as_bytes(namespace)
        keys = self._keys(hashes, None, None)
        ticket = ctypes.c_int64()
        status = self._lib.okv_submit_lookup(self._live(), ns, len(ns), keys, len(hashes), int(pin), int(peers),
                                             ctypes.byref(ticket))
        if status != 0:
            self._raise(status, _native.Result())
        return Ticket(ticket.value, "lookup", ns, tuple(bytes(h) for h in hashes), pin, keys)

    def submit_read(self, namespace: bytes | str, hashes: Sequence[bytes], offsets: Sequence[int],
                    capacities: Sequence[int] | None = None, *, lease_id: int = 0) -> Ticket:
        ns = _as_bytes(namespace)
        keys = self._keys(hashes, offsets, capacities if capacities is not None else self._default_capacities(offsets))
        ticket = ctypes.c_int64()
        status = self._lib.okv_submit_read(self._live(), ns, len(ns), keys, len(hashes), lease_id,
                                           ctypes.byref(ticket))
        if status != 0:
            self._raise(status, _native.Result())
        return Ticket(ticket.value, "read", ns, tuple(bytes(h) for h in hashes), False, keys)

    def poll(self, ticket: Ticket) -> LookupResult | ReadResult | None:
        """The ticket's answer if it is in (the ticket is then done), else None."""
        result = _native.Result()
        status = self._lib.okv_poll(self._live(), ticket.ticket_id, ctypes.byref(result))
        if status == _native.E_PENDING:
            return None
        return self._ticket_result(ticket, status, result)

    def wait(self, ticket: Ticket, timeout_ms: int = -1) -> LookupResult | ReadResult:
        """Block until the ticket's answer is in (at most timeout_ms; -1: the response timeout)."""
        result = _native.Result()
        status = self._lib.okv_wait(self._live(), ticket.ticket_id, timeout_ms, ctypes.byref(result))
        return self._ticket_result(ticket, status, result)

    def _ticket_result(self, ticket: Ticket, status: int, result: _native.Result) -> LookupResult | ReadResult:
        if status != 0:
            self._raise(status, result)
        if ticket.kind == "lookup":
            return self._lookup_result(result, ticket.namespace, ticket.hashes, ticket.pin)
        count = result.key_count
        return ReadResult(result.value, _statuses(result, count),
                          list(result.length[:count]))
