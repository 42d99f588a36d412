"""The OrbitKV plug-in inside the installed LMCache: its own storage factory (CreateStorageBackends) builds the
RemoteBackend for `remote_storage_plugins: ["orbitkv"]`, whose ConnectorManager loads orbitkv.lmcache from the extra
config; chunks are MemoryObjs of LMCache's own local CPU backend, stored in and restored from a real Manager process.

Run by scripts/test through the engines' venv: `$(scripts/engines --python) -m pytest clients/python/tests`."""

from __future__ import annotations

import os
import random

import pytest
import torch

import okv_procs
from okv_procs import Manager, wait_until

from lmcache.utils import CacheEngineKey  # noqa: E402
from lmcache.v1.memory_management import MemoryFormat  # noqa: E402

import lmcache_gate  # noqa: E402
import orbitkv.lmcache  # noqa: E402
from lmcache_storage import CHUNK, MODEL, POOL, Lmc  # noqa: E402
from orbitkv import Client  # noqa: E402
from orbitkv.lmcache import OrbitKVConnector, PluginConfigError, Settings, hash_of, namespace_of  # noqa: E402


_hashes = random.Random(os.getpid())


def fresh_hashes(count: int) -> list[int]:
    return [_hashes.getrandbits(64) for _ in range(count)]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("lmcache-plugin"))


@pytest.fixture(scope="module")
def manager(workdir):
    m = Manager(okv_procs.shm_dir("lmcache"), os.path.join(workdir, "manager.log"), "--pool-bytes", str(POOL))
    yield m
    m.stop()
    okv_procs.remove_tree(m.dir)


@pytest.fixture(scope="module")
def lmc(manager):
    engine = Lmc(manager.dir)
    yield engine
    engine.close()


def test_lmcache_builds_the_plugin_from_its_configuration(lmc, manager):
    connector = lmc.connector
    assert type(connector) is OrbitKVConnector
    assert connector.plugin_name == "orbitkv"
    assert connector.settings == Settings(dir=manager.dir, region_chunks=4, retry_attach_s=0.2)
    for check in ("support_batched_get", "support_batched_put", "support_batched_contains",
                  "support_batched_async_contains", "support_batched_get_non_blocking"):
        assert getattr(lmc.remote.connection, check)(), check


def test_settings_refuse_unknown_keys_and_bad_values():
    with pytest.raises(PluginConfigError, match="unknown extra_config keys"):
        Settings.parse({"remote_storage_plugin.orbitkv.dri": "/x"}, "orbitkv")
    for edge in (0, 513):
        with pytest.raises(PluginConfigError, match="region_chunks"):
            Settings.parse({"remote_storage_plugin.orbitkv.region_chunks": edge}, "orbitkv")
    assert Settings.parse({"remote_storage_plugin.orbitkv.region_chunks": 512}, "orbitkv").region_chunks == 512
    with pytest.raises(PluginConfigError, match="timeout_ms"):
        Settings.parse({"remote_storage_plugin.orbitkv.timeout_ms": "soon"}, "orbitkv")
    assert Settings.parse({"remote_storage_plugin.other.dir": "/x"}, "orbitkv") == Settings()


def test_keys_map_to_a_namespace_and_the_chunk_hash():
    key = CacheEngineKey(MODEL, 2, 1, 0x1122334455667788, torch.bfloat16)
    assert namespace_of(key) == f"lmcache;model={MODEL};ws=2;worker=1;fmt=bfloat16".encode()
    assert hash_of(key) == (0x1122334455667788).to_bytes(8, "little")
    assert hash_of(CacheEngineKey(MODEL, 2, 1, -1, torch.bfloat16)) == b"\xff" * 8
    tagged = CacheEngineKey(MODEL, 2, 1, 5, torch.bfloat16, {"lmcache.tag.user": "a"})
    assert namespace_of(tagged).endswith(b";tags=user%a")
    assert len(namespace_of(CacheEngineKey("m" * 400, 2, 1, 5, torch.bfloat16))) <= 256


def test_put_and_get_are_byte_exact_full_and_partial_chunks(lmc):
    hashes = fresh_hashes(3)
    keys = [lmc.key(h) for h in hashes]
    chunks = [lmc.chunk(1), lmc.chunk(2), lmc.chunk(3, tokens=5)]  # the last chunk of a prompt is partial
    lmc.put(keys, [obj for obj, _ in chunks])
    assert lmc.connector.counters["put_stored"] >= 3
    for key, (_, expected) in zip(keys, chunks):
        assert lmc.remote.contains(key)
        got = lmc.remote.get_blocking(key)
        assert got is not None
        assert bytes(got.byte_array) == expected
        got.ref_count_down()
    partial = lmc.remote.get_blocking(keys[2])
    assert partial.get_shapes() == lmc.metadata.get_shapes(5)
    assert partial.get_dtypes() == [torch.bfloat16]
    assert partial.get_memory_format() == MemoryFormat.KV_2LTD
    partial.ref_count_down()
    # LMCache's batched retrieve: one pinned lookup and batched reads (more chunks than the region's 4 slots)
    more = fresh_hashes(6)
    more_keys = [lmc.key(h) for h in more]
    more_chunks = [lmc.chunk(10 + i) for i in range(6)]
    lmc.put(more_keys, [obj for obj, _ in more_chunks])
    got = lmc.remote.batched_get_blocking(more_keys)
    assert [bytes(o.byte_array) for o in got] == [b for _, b in more_chunks]
    for obj in got:
        obj.ref_count_down()


def test_a_single_put_task_is_stored_too(lmc):
    key = lmc.key(fresh_hashes(1)[0])
    obj, expected = lmc.chunk(20)
    lmc.remote.submit_put_task(key, obj).result(30)
    obj.ref_count_down()
    got = lmc.remote.get_blocking(key)
    assert bytes(got.byte_array) == expected
    got.ref_count_down()


def test_exists_and_batched_contains_are_a_prefix(lmc, manager):
    present = [lmc.key(h) for h in fresh_hashes(3)]
    lmc.put(present, [lmc.chunk(30 + i)[0] for i in range(3)])
    absent = lmc.key(fresh_hashes(1)[0])
    after = lmc.key(fresh_hashes(1)[0])
    lmc.put([after], [lmc.chunk(40)[0]])
    chain = present + [absent, after]
    assert lmc.remote.batched_contains(chain) == 3
    assert lmc.connector.exists_sync(present[0]) and not lmc.connector.exists_sync(absent)
    assert lmc.run(lmc.connector.exists(present[1])) and not lmc.run(lmc.connector.exists(absent))
    assert lmc.remote.contains(after) and not lmc.remote.contains(absent)
    # another worker's or another model's chunk of the same hash is another key
    assert not lmc.remote.contains(lmc.key(present[0].chunk_hash, worker_id=1))
    assert not lmc.remote.contains(lmc.key(present[0].chunk_hash, model="another/model"))
    assert lmc.run(lmc.remote.batched_async_contains("lookup-a", chain, pin=False)) == 3
    assert lmc.connector.held_lookups() == 0


def test_a_pinned_async_lookup_holds_its_chunks_until_its_get(lmc, manager):
    keys = [lmc.key(h) for h in fresh_hashes(5)]
    chunks = [lmc.chunk(50 + i) for i in range(5)]
    lmc.put(keys, [obj for obj, _ in chunks])
    pins_before = manager.pins()[0]
    assert lmc.run(lmc.remote.batched_async_contains("lookup-b", keys + [lmc.key(1)], pin=True)) == 5
    assert lmc.connector.held_lookups() == 1
    assert manager.pins()[0] >= pins_before + 5
    got = lmc.run(lmc.remote.batched_get_non_blocking("lookup-b", keys))
    assert [bytes(o.byte_array) for o in got] == [b for _, b in chunks]
    for obj in got:
        obj.ref_count_down()
    assert lmc.connector.held_lookups() == 0
    wait_until(lambda: manager.pins()[0] == pins_before, 10, "the lookup's pins released")


def test_pinned_lookups_waiting_for_their_get_are_bounded(lmc, manager, monkeypatch):
    monkeypatch.setattr(orbitkv.lmcache, "MAX_HELD_LOOKUPS", 2)
    keys = [lmc.key(h) for h in fresh_hashes(2)]
    chunks = [lmc.chunk(90 + i) for i in range(2)]
    lmc.put(keys, [obj for obj, _ in chunks])
    leases_before = manager.pins()[1]
    dropped = lmc.connector.counters["held_dropped"]
    for lookup in ("held-1", "held-2"):
        assert lmc.run(lmc.remote.batched_async_contains(lookup, keys, pin=True)) == 2
    assert lmc.connector.held_lookups() == 2 and lmc.connector.counters["held_dropped"] == dropped
    assert lmc.run(lmc.remote.batched_async_contains("held-3", keys, pin=True)) == 2
    assert lmc.connector.held_lookups() == 2 and lmc.connector.counters["held_dropped"] == dropped + 1
    assert manager.pins()[1] == leases_before + 2  # the oldest lookup's lease was released
    # the dropped lookup's get reads without pins; the others consume theirs
    for lookup in ("held-1", "held-2", "held-3"):
        got = lmc.run(lmc.remote.batched_get_non_blocking(lookup, keys))
        assert [bytes(o.byte_array) for o in got] == [b for _, b in chunks]
        for obj in got:
            obj.ref_count_down()
    assert lmc.connector.held_lookups() == 0
    wait_until(lambda: manager.pins()[1] == leases_before, 10, "every lease released")


def test_a_chunk_larger_than_a_slot_is_not_stored(lmc):
    key = lmc.key(fresh_hashes(1)[0])
    obj, _ = lmc.chunk(100, tokens=CHUNK + 1)
    oversize = lmc.connector.counters["put_oversize"]
    lmc.remote.submit_put_task(key, obj).result(30)
    obj.ref_count_down()
    assert lmc.connector.counters["put_oversize"] == oversize + 1
    assert not lmc.remote.contains(key)
    exact = lmc.key(fresh_hashes(1)[0])
    lmc.put([exact], [lmc.chunk(101, tokens=CHUNK)[0]])  # a full chunk fills its slot exactly


def test_a_block_that_is_not_an_lmcache_chunk_is_a_miss(lmc, manager):
    key = lmc.key(fresh_hashes(1)[0])
    with Client(dir=manager.dir, name="foreign", data_region_bytes=1 << 16) as client:
        client.put(namespace_of(key), [hash_of(key)], [b"not a chunk of LMCache"])
    assert lmc.remote.contains(key)
    malformed = lmc.connector.counters["get_malformed"]
    assert lmc.remote.get_blocking(key) is None
    assert lmc.connector.counters["get_malformed"] == malformed + 1


def test_list_forgets_the_oldest_keys_beyond_its_bound(lmc, monkeypatch):
    monkeypatch.setattr(orbitkv.lmcache, "MAX_LISTED_KEYS", 3)
    keys = [lmc.key(h) for h in fresh_hashes(4)]
    forgotten = lmc.connector.counters["list_forgotten"]
    lmc.put(keys, [lmc.chunk(110 + i)[0] for i in range(4)])
    assert lmc.run(lmc.connector.list()) == [k.to_string() for k in keys[1:]]
    assert lmc.connector.counters["list_forgotten"] >= forgotten + 1


def test_a_put_after_lmcache_freed_its_cpu_memory_reads_nothing(manager):
    """LMCache's storage manager closes the local CPU backend (freeing the chunks' memory) before the remote
    backends: a put that runs after that stores nothing and does not touch the freed memory."""
    engine = Lmc(manager.dir)
    try:
        keys = [engine.key(h) for h in fresh_hashes(2)]
        objs = [engine.chunk(120 + i)[0] for i in range(2)]
        engine.cpu.close()
        engine.run(engine.connector.batched_put(keys, objs))
        assert engine.connector.counters["put_after_close"] == 1
        assert engine.remote.batched_contains(keys) == 0
    finally:
        engine.remote.close()
        engine.loop.call_soon_threadsafe(engine.loop.stop)


def test_list_names_the_stored_keys(lmc):
    keys = [lmc.key(h) for h in fresh_hashes(2)]
    lmc.put(keys, [lmc.chunk(60 + i)[0] for i in range(2)])
    listed = set(lmc.run(lmc.connector.list()))
    assert {k.to_string() for k in keys} <= listed


def test_a_killed_manager_is_a_miss_and_a_restarted_one_serves_again(workdir):
    m = Manager(okv_procs.shm_dir("lmcache-gone"), os.path.join(workdir, "manager-gone.log"), "--pool-bytes", str(POOL))
    engine = Lmc(m.dir, worker_id=1)
    try:
        keys = [engine.key(h) for h in fresh_hashes(3)]
        engine.put(keys, [engine.chunk(70 + i)[0] for i in range(3)])
        assert engine.remote.batched_contains(keys) == 3
        m.kill()
        # every path LMCache takes answers a miss, an empty list or a skipped put; none raises
        assert engine.remote.batched_contains(keys) == 0
        assert not engine.remote.contains(keys[0])
        assert engine.remote.get_blocking(keys[0]) is None
        assert engine.remote.batched_get_blocking(keys) == [None] * 3
        assert engine.run(engine.remote.batched_async_contains("gone", keys, pin=True)) == 0
        assert engine.run(engine.remote.batched_get_non_blocking("gone", keys)) == []
        assert engine.run(engine.connector.list()) == []
        obj, _ = engine.chunk(80)
        engine.remote.submit_put_task(engine.key(7), obj).result(30)
        obj.ref_count_down()
        assert engine.remote.put_failed_count == 0
        assert engine.connector.counters["manager_unavailable"] >= 1
        # a new Manager on the same directory: the plug-in attaches again and stores and serves
        m.start()
        key = engine.key(fresh_hashes(1)[0])
        obj, expected = engine.chunk(81)
        wait_until(lambda: engine.connector._call("probe", False, lambda c: True), 10, "the plug-in attached again")
        engine.put([key], [obj])
        got = engine.remote.get_blocking(key)
        assert got is not None and bytes(got.byte_array) == expected
        got.ref_count_down()
    finally:
        engine.close()
        m.stop()
        okv_procs.remove_tree(m.dir)


def test_the_gate_passes(tmp_path):
    result = lmcache_gate.run(str(tmp_path))
    assert result["ok"], result
    assert result["package"] == {"name": "lmcache", "version": "0.5.6"}
    assert result["blocks"] == result["expectedBlocks"] and result["mismatches"] == 0
