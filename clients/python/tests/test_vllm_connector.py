"""The OrbitKV connector inside the installed vLLM (its real engine, scheduler and worker processes) against a real
Manager process: restores, and every failure path degrading to recomputation with identical outputs and no pin or
lease left behind. The two-Manager paths (peers, a source killed or corrupted) are the gate's (test_vllm_gate.py).

Run by scripts/test through the engines' venv: `$(scripts/engines --python) -m pytest clients/python/tests`."""

from __future__ import annotations

import os
import time
import types

import pytest

import okv_procs
from okv_procs import Engine, Manager, prompt, wait_until

pytest.importorskip("vllm")

from orbitkv import Client  # noqa: E402
from orbitkv.vllm.config import ConnectorConfigError, Settings, identity  # noqa: E402
from orbitkv.vllm.link import ManagerLink  # noqa: E402
from orbitkv.vllm.stats import OrbitKVStats  # noqa: E402

MODEL = {"layers": 2, "hidden": 256, "heads": 4, "kv-heads": 4, "intermediate": 512}
BLOCK = 128
BLOCK_BYTES = 2 * 4 * BLOCK * 2 * 64 * 2
PROMPT = 700                      # 5 full blocks before the block holding the last token
FULL = (PROMPT - 1) // BLOCK
POOL = 16 << 20
EVENTS_TOPIC = "vllm-connector-test"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("vllm-connector"))


@pytest.fixture(scope="module")
def events_port():
    return okv_procs.free_port()


@pytest.fixture(scope="module")
def manager(workdir, events_port):
    m = Manager(okv_procs.shm_dir("pytest"), os.path.join(workdir, "manager.log"), "--pool-bytes", str(POOL),
                "--kv-events-endpoint", f"tcp://*:{events_port}", "--kv-events-topic", EVENTS_TOPIC)
    yield m
    m.stop()
    okv_procs.remove_tree(m.dir)


@pytest.fixture(scope="module")
def engine(workdir, manager):
    e = Engine(workdir, "engine", manager.dir, model=MODEL, extra={"retry_attach_s": 1})
    yield e
    e.stop()


_seed = [1000]


def fresh(length: int = PROMPT) -> list[int]:
    _seed[0] += 1
    return prompt(_seed[0] + os.getpid(), length)


def run(engine: Engine, tokens: list[int]) -> dict:
    return engine.generate([tokens])[0]


def counter_grew(engine: Engine, name: str, before: dict, by: float = 1) -> dict:
    return wait_until(lambda: (lambda s: s if s.get(name, 0) - before.get(name, 0) >= by else None)(engine.stats()),
                      15, f"connector counter {name}")


def assert_no_pins(manager: Manager) -> None:
    wait_until(lambda: manager.pins() == (0, 0), 15, "pins and leases back to zero")


# -- identity (no engine) ------------------------------------------------------------------------------------------

def fake_config(**changes):
    spec = type("FullAttentionSpec", (), {})()
    spec.block_size, spec.num_kv_heads, spec.head_size, spec.dtype, spec.page_size_bytes = 128, 4, 64, "torch.bfloat16", 1
    for key in ("block_size", "num_kv_heads", "head_size", "dtype"):
        if key in changes:
            setattr(spec, key, changes.pop(key))
    group = types.SimpleNamespace(kv_cache_spec=spec, layer_names=["l0", "l1"])
    kv = types.SimpleNamespace(kv_cache_groups=[group], kv_cache_layout="LBHNC", num_blocks=10)
    vllm = types.SimpleNamespace(
        cache_config=types.SimpleNamespace(enable_prefix_caching=True,
                                           prefix_caching_hash_algo=changes.pop("algo", "sha256")),
        parallel_config=types.SimpleNamespace(tensor_parallel_size=changes.pop("tp", 1), pipeline_parallel_size=1,
                                              rank=0),
        model_config=types.SimpleNamespace(model=changes.pop("model", "m"), revision=None, seed=0),
        load_config=types.SimpleNamespace(load_format="auto"))
    assert not changes
    return vllm, kv


def test_namespace_binds_everything_that_changes_the_bytes(monkeypatch):
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    base = identity(*fake_config()).namespace
    for change in ({"dtype": "torch.float16"}, {"block_size": 16}, {"num_kv_heads": 8}, {"head_size": 128},
                   {"model": "other"}, {"algo": "sha256_cbor"}):
        assert identity(*fake_config(**change)).namespace != base, change
    assert b"layout=LBHNC" in base and b"layers=2" in base and b"tp=0/1" in base


def test_random_seeded_hashes_are_refused_and_a_shared_seed_is_bound(monkeypatch):
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    with pytest.raises(ConnectorConfigError, match="xxhash"):
        identity(*fake_config(algo="xxhash"))
    with pytest.raises(ConnectorConfigError, match="TP=2"):
        identity(*fake_config(tp=2))
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    seeded = identity(*fake_config(algo="xxhash")).namespace
    monkeypatch.setenv("PYTHONHASHSEED", "8")
    assert identity(*fake_config(algo="xxhash")).namespace != seeded


def test_settings_refuse_unknown_keys_and_bad_values():
    with pytest.raises(ConnectorConfigError, match="unknown"):
        Settings.parse({"dri": "/x"})
    with pytest.raises(ConnectorConfigError):
        Settings.parse({"region_blocks": 0})
    assert Settings.parse({"peers": "false"}).peers is False


def test_a_bad_dir_is_a_warning_and_a_counter_not_an_error():
    stats = OrbitKVStats()
    link = ManagerLink(Settings(dir="/nonexistent/orbitkv", retry_attach_s=0), "test", 4096, stats)
    assert link.client() is None and link.client() is None
    assert stats.data["manager_unavailable"] == 2


# -- the scheduler part's leases, against the real Manager (fake requests, no engine) -------------------------------

class FakeRequest:
    def __init__(self, rid: str, hashes: list[bytes], num_tokens: int) -> None:
        self.request_id, self.block_hashes, self.num_tokens, self.num_computed_tokens = rid, hashes, num_tokens, 0


class FakeBlocks:
    def __init__(self, ids: list[int]) -> None:
        self.ids = ids

    def get_block_ids(self):
        return (self.ids,)


def scheduler_part(manager):
    from orbitkv.vllm.config import Identity
    from orbitkv.vllm.scheduler import OrbitKVScheduler
    ident = Identity(b"pytest-leases", BLOCK, ("l0",), 4096)
    return OrbitKVScheduler(Settings(dir=manager.dir, peers=False), ident), ident


def test_the_scheduler_releases_its_lease_on_every_path_the_worker_does_not_take_it(manager):
    from orbitkv.vllm.metadata import OrbitKVWorkerMeta
    hashes = [bytes([7, i]) * 16 for i in range(4)]
    with Client(dir=manager.dir, name="pytest-publisher", data_region_bytes=4 * 4096) as publisher:
        publisher.put(b"pytest-leases", hashes, [bytes(4096)] * 4)
    part, ident = scheduler_part(manager)
    try:
        # finished (or aborted) while waiting: matched, never allocated
        waiting = FakeRequest("waiting", hashes, 5 * BLOCK)
        assert part.get_num_new_matched_tokens(waiting, 0) == (4 * BLOCK, False)
        assert part.get_num_new_matched_tokens(waiting, 0) == (4 * BLOCK, False), "asked again: the same lease"
        assert manager.pins() == (4, 1)
        part.request_finished(waiting, [])
        assert_no_pins(manager)
        # allocated with no external tokens (vLLM chose not to load)
        skipped = FakeRequest("skipped", hashes, 5 * BLOCK)
        part.get_num_new_matched_tokens(skipped, 0)
        part.update_state_after_alloc(skipped, FakeBlocks([1, 2, 3, 4, 5]), 0)
        assert_no_pins(manager)
        # handed to the worker in a step's metadata, which the worker did not take (it had no Manager)
        handed = FakeRequest("handed", hashes, 5 * BLOCK)
        part.get_num_new_matched_tokens(handed, 0)
        part.update_state_after_alloc(handed, FakeBlocks([1, 2, 3, 4, 5]), 4 * BLOCK)
        meta = part.build_connector_meta(types.SimpleNamespace(num_scheduled_tokens={}))
        assert [run.block_ids for run in meta.loads] == [[1, 2, 3, 4]] and meta.loads[0].lease_ids
        part.request_finished(handed, [])
        assert manager.pins() == (4, 1), "held until the worker's report for that step"
        part.update_connector_output(types.SimpleNamespace(kv_connector_worker_meta=OrbitKVWorkerMeta({meta.step: set()})))
        assert_no_pins(manager)
        # handed and taken: the worker's Read consumed it
        taken = FakeRequest("taken", hashes, 5 * BLOCK)
        part.get_num_new_matched_tokens(taken, 0)
        part.update_state_after_alloc(taken, FakeBlocks([1, 2, 3, 4, 5]), 4 * BLOCK)
        meta = part.build_connector_meta(types.SimpleNamespace(num_scheduled_tokens={}))
        with Client(dir=manager.dir, name="pytest-worker", data_region_bytes=4 * 4096) as worker:
            run = meta.loads[0]
            assert worker.read(ident.namespace, run.hashes, [i * 4096 for i in range(4)],
                               lease_id=run.lease_ids[0]).restored == 4
        assert_no_pins(manager)
        part.update_connector_output(types.SimpleNamespace(
            kv_connector_worker_meta=OrbitKVWorkerMeta({meta.step: {"taken"}})))
        assert manager.counters()["Rejected: unknown lease"] == 0, "nothing released twice"
        # engine shutdown with a lease still held
        held = FakeRequest("held", hashes, 5 * BLOCK)
        part.get_num_new_matched_tokens(held, 0)
    finally:
        part.shutdown()
    assert_no_pins(manager)


# -- the engine against a real Manager -----------------------------------------------------------------------------

def test_restores_its_own_blocks_once_vllm_dropped_them(engine, manager):
    tokens = fresh()
    cold = run(engine, tokens)
    before = counter_grew(engine, "saved_blocks", {}, FULL)
    engine.reset()
    warm = run(engine, tokens)
    after = counter_grew(engine, "tier_LOCAL", before, FULL)
    assert warm["ids"] == cold["ids"]
    assert warm["cached"] == FULL * BLOCK
    assert after["loaded_blocks"] - before.get("loaded_blocks", 0) == FULL
    assert_no_pins(manager)


def test_saved_blocks_go_out_in_the_kv_events_with_their_tokens_and_parents(engine, manager, events_port):
    zmq = pytest.importorskip("zmq")
    from kv_subscriber import Subscriber
    from vllm.distributed.kv_events import BlockStored

    ctx = zmq.Context()
    sub = Subscriber(ctx, events_port, EVENTS_TOPIC)
    try:
        # ZMQ's slow joiner: serve prompts until the subscriber sees a save, then judge a fresh prompt's saves
        def seen():
            run(engine, fresh())
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                sub.poll()
                if any(isinstance(e, BlockStored) for e in sub.events()):
                    return True
            return False
        wait_until(seen, 90, "the subscription to see a save", interval_s=0)
        tokens = fresh()
        run(engine, tokens)
        expected = [tuple(tokens[j * BLOCK:(j + 1) * BLOCK]) for j in range(FULL)]

        def saved(events):
            by_tokens = {tuple(e.token_ids): e for e in events if isinstance(e, BlockStored) and e.token_ids}
            return [by_tokens[t] for t in expected] if all(t in by_tokens for t in expected) else None
        chain = saved(sub.wait_for(saved, "BlockStored of the saved blocks with their tokens"))
    finally:
        sub.close()
        ctx.term()
    assert chain[0].parent_block_hash is None, "a request's first block has no parent"
    for j in range(1, FULL):
        assert chain[j].parent_block_hash == chain[j - 1].block_hashes[0]
    assert all(e.block_size == BLOCK and e.medium == "CPU" and len(e.block_hashes) == 1 for e in chain)


def test_evicted_blocks_are_recomputed(engine, manager):
    tokens = fresh()
    cold = run(engine, tokens)
    counter_grew(engine, "saved_blocks", {}, FULL)
    okv_procs.publish_filler(manager.dir, POOL // BLOCK_BYTES + 8, BLOCK_BYTES, _seed[0])
    engine.reset()
    again = run(engine, tokens)
    assert again["ids"] == cold["ids"]
    assert again["cached"] == 0
    assert_no_pins(manager)


def test_a_full_pool_skips_saves_and_serves_on(engine, manager):
    # another client publishes and pins the whole pool: the engine's publishes find no space
    hashes = [i.to_bytes(8, "little") for i in range(POOL // BLOCK_BYTES)]
    with Client(dir=manager.dir, name="pool-filler", data_region_bytes=4 * BLOCK_BYTES) as holder:
        holder.put(b"pytest-filler", hashes, [bytes([i % 251]) * BLOCK_BYTES for i in range(len(hashes))])
        # the oldest may have been evicted by the newest: pin the run that stayed
        resident = [h for h in hashes if holder.lookup(b"pytest-filler", [h]).prefix_len]
        assert len(resident) > len(hashes) // 2
        lease = holder.lookup(b"pytest-filler", resident, pin=True).lease
        before = engine.stats()
        no_space = manager.counters().get("Rejected: no space (publish keys)", 0)
        tokens = fresh()
        first = run(engine, tokens)
        counter_grew(engine, "lookups", before)
        assert engine.stats().get("saved_blocks", 0) - before.get("saved_blocks", 0) < FULL
        assert manager.counters().get("Rejected: no space (publish keys)", 0) > no_space
        engine.reset()
        assert run(engine, tokens)["ids"] == first["ids"]
        holder.release(lease)
    assert_no_pins(manager)


def test_a_missing_then_restarted_manager_is_a_warning_and_vllm_runs_on(engine, manager):
    tokens = fresh()
    reference = run(engine, tokens)
    before = engine.stats()
    manager.kill()
    engine.reset()
    missing = run(engine, tokens)
    assert missing["ids"] == reference["ids"]
    counter_grew(engine, "manager_unavailable", before)
    manager.start()

    def saves_again() -> bool:
        saved = engine.stats().get("saved_blocks", 0)
        run(engine, fresh(300))
        return engine.stats().get("saved_blocks", 0) > saved

    wait_until(saves_again, 60, "the engine saves to the restarted Manager", 1.0)
    engine.reset()
    assert run(engine, tokens)["ids"] == reference["ids"]
    assert_no_pins(manager)
