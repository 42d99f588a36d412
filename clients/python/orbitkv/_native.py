"""ctypes declarations of liborbitkv.so (orbitkv.h, ABI version 1)."""

from __future__ import annotations

import ctypes
import os
import pathlib

MAX_KEYS = 512
MAX_HASH_LENGTH = 64
MAX_NAMESPACE_LENGTH = 256
MAX_MESSAGE_LENGTH = 1024
MAX_TICKETS = 8
MAX_CANDIDATES = 512
MAX_OWNERS = 32
MAX_NODE_ID_LENGTH = 64
E_PENDING = -14
S_BATCH_TOO_LARGE = 6
S_KEY_TOO_LARGE = 7


class Options(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("dir", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("data_region_bytes", ctypes.c_uint64),
        ("attach_timeout_ms", ctypes.c_int64),
        ("response_timeout_ms", ctypes.c_int64),
        ("heartbeat_interval_ms", ctypes.c_int64),
        ("heartbeat_thread", ctypes.c_int),
        ("wait_yield_us", ctypes.c_int64),
    ]


class Key(ctypes.Structure):
    _fields_ = [
        ("hash", ctypes.c_char_p),
        ("hash_length", ctypes.c_uint32),
        ("length", ctypes.c_uint32),
        ("offset", ctypes.c_uint64),
    ]


class Lineage(ctypes.Structure):
    _fields_ = [
        ("parent_hash", ctypes.c_char_p),
        ("parent_hash_length", ctypes.c_uint32),
        ("token_ids", ctypes.POINTER(ctypes.c_int32)),
        ("token_count", ctypes.c_uint32),
    ]


class Candidate(ctypes.Structure):
    _fields_ = [
        ("key_index", ctypes.c_int32),
        ("owner_index", ctypes.c_int32),
        ("insertion_sequence", ctypes.c_int64),
        ("length", ctypes.c_int32),
        ("tier", ctypes.c_uint8),
    ]


class Owner(ctypes.Structure):
    _fields_ = [
        ("runtime_uuid_msb", ctypes.c_int64),
        ("runtime_uuid_lsb", ctypes.c_int64),
        ("node_id_length", ctypes.c_uint16),
        ("node_id", ctypes.c_char * (MAX_NODE_ID_LENGTH + 1)),
    ]


class Result(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("code", ctypes.c_int32),
        ("key_count", ctypes.c_int32),
        ("value", ctypes.c_int64),
        ("lease_id", ctypes.c_int64),
        ("status", ctypes.c_uint8 * MAX_KEYS),
        ("reason", ctypes.c_uint8 * MAX_KEYS),
        ("length", ctypes.c_int32 * MAX_KEYS),
        ("candidate_count", ctypes.c_int32),
        ("owner_count", ctypes.c_int32),
        ("message_length", ctypes.c_uint16),
        ("message", ctypes.c_char * (MAX_MESSAGE_LENGTH + 1)),
        ("key_base", ctypes.c_int32),
        ("dropped_candidates", ctypes.c_int32),
        ("candidates", Candidate * MAX_CANDIDATES),
        ("owners", Owner * MAX_OWNERS),
        ("pool_offset", ctypes.c_int64 * MAX_KEYS),
    ]


def _find_library() -> str:
    env = os.environ.get("ORBITKV_LIB")
    if env:
        return env
    here = pathlib.Path(__file__).resolve().parent
    beside = here / "liborbitkv.so"
    if beside.is_file():
        return str(beside)
    in_tree = here.parent.parent / "c" / "target" / "lib" / "liborbitkv.so"
    if in_tree.is_file():
        return str(in_tree)
    raise OSError("liborbitkv.so not found: set ORBITKV_LIB or install the package after building clients/c")


def load() -> ctypes.CDLL:
    lib = ctypes.CDLL(_find_library())
    p = ctypes.POINTER
    client = ctypes.c_void_p
    lib.okv_options_init.argtypes = [p(Options)]
    lib.okv_options_init.restype = None
    lib.okv_result_init.argtypes = [p(Result)]
    lib.okv_result_init.restype = None
    lib.okv_strerror.argtypes = [ctypes.c_int]
    lib.okv_strerror.restype = ctypes.c_char_p
    lib.okv_last_error.argtypes = [client]
    lib.okv_last_error.restype = ctypes.c_char_p
    lib.okv_open.argtypes = [p(Options), p(client)]
    lib.okv_open.restype = ctypes.c_int
    lib.okv_open_error.argtypes = []
    lib.okv_open_error.restype = ctypes.c_char_p
    lib.okv_close.argtypes = [client]
    lib.okv_close.restype = ctypes.c_int
    lib.okv_data_region.argtypes = [client]
    lib.okv_data_region.restype = ctypes.c_void_p
    lib.okv_data_region_bytes.argtypes = [client]
    lib.okv_data_region_bytes.restype = ctypes.c_uint64
    lib.okv_client_id.argtypes = [client]
    lib.okv_client_id.restype = ctypes.c_int64
    lib.okv_pool.argtypes = [client]
    lib.okv_pool.restype = ctypes.c_void_p
    lib.okv_pool_bytes.argtypes = [client]
    lib.okv_pool_bytes.restype = ctypes.c_uint64
    lib.okv_pool_populate.argtypes = [client]
    lib.okv_pool_populate.restype = ctypes.c_int
    lib.okv_max_keys_per_request.argtypes = [client]
    lib.okv_max_keys_per_request.restype = ctypes.c_int32
    keys = [ctypes.c_char_p, ctypes.c_uint32, p(Key), ctypes.c_uint32]
    lib.okv_publish.argtypes = [client, *keys, p(Result)]
    lib.okv_publish.restype = ctypes.c_int
    lib.okv_lookup.argtypes = [client, *keys, ctypes.c_int, ctypes.c_int, p(Result)]
    lib.okv_lookup.restype = ctypes.c_int
    lib.okv_lookup_packed.argtypes = [client, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32,
                                      ctypes.c_uint32, ctypes.c_int, ctypes.c_int, p(Result)]
    lib.okv_lookup_packed.restype = ctypes.c_int
    lib.okv_read.argtypes = [client, *keys, ctypes.c_int64, p(Result)]
    lib.okv_read.restype = ctypes.c_int
    lib.okv_release.argtypes = [client, ctypes.c_int64, p(Result)]
    lib.okv_release.restype = ctypes.c_int
    lib.okv_submit_lookup.argtypes = [client, *keys, ctypes.c_int, ctypes.c_int, p(ctypes.c_int64)]
    lib.okv_submit_lookup.restype = ctypes.c_int
    lib.okv_submit_read.argtypes = [client, *keys, ctypes.c_int64, p(ctypes.c_int64)]
    lib.okv_submit_read.restype = ctypes.c_int
    lib.okv_poll.argtypes = [client, ctypes.c_int64, p(Result)]
    lib.okv_poll.restype = ctypes.c_int
    lib.okv_wait.argtypes = [client, ctypes.c_int64, ctypes.c_int64, p(Result)]
    lib.okv_wait.restype = ctypes.c_int
    results = [p(Result), ctypes.c_uint32, p(ctypes.c_uint32)]
    lib.okv_publish_chain.argtypes = [client, *keys, *results]
    lib.okv_publish_chain.restype = ctypes.c_int
    lib.okv_lookup_chain.argtypes = [client, *keys, ctypes.c_int, ctypes.c_int, *results]
    lib.okv_lookup_chain.restype = ctypes.c_int
    lib.okv_read_chain.argtypes = [client, *keys, p(ctypes.c_int64), ctypes.c_uint32, *results]
    lib.okv_read_chain.restype = ctypes.c_int
    lib.okv_chain_requests.argtypes = [client, ctypes.c_uint32, p(Key), ctypes.c_uint32]
    lib.okv_chain_requests.restype = ctypes.c_int32
    lib.okv_submit_publish.argtypes = [client, *keys, p(ctypes.c_int64)]
    lib.okv_submit_publish.restype = ctypes.c_int
    lib.okv_prepare.argtypes = [client, *keys, p(Result)]
    lib.okv_prepare.restype = ctypes.c_int
    lib.okv_commit.argtypes = [client, *keys, p(Result)]
    lib.okv_commit.restype = ctypes.c_int
    lib.okv_submit_commit.argtypes = [client, *keys, p(ctypes.c_int64)]
    lib.okv_submit_commit.restype = ctypes.c_int
    lineage = [ctypes.c_char_p, ctypes.c_uint32, p(Key), p(Lineage), ctypes.c_uint32]
    lib.okv_publish_lineage.argtypes = [client, *lineage, p(Result)]
    lib.okv_publish_lineage.restype = ctypes.c_int
    lib.okv_submit_publish_lineage.argtypes = [client, *lineage, p(ctypes.c_int64)]
    lib.okv_submit_publish_lineage.restype = ctypes.c_int
    lib.okv_do_work.argtypes = [client]
    lib.okv_do_work.restype = ctypes.c_int
    return lib
