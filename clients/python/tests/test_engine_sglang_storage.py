"""OrbitKV as SGLang's HiCache storage backend, created by the installed SGLang's own backend factory (the
`dynamic` backend and its extra config, as `--hicache-storage-backend dynamic` does) over SGLang's real MHA and MLA
host pools, keyed by SGLang's own page hashes, against real Manager processes: pages byte-exact both ways, the pinned
prefix of batch_exists and its bounds, the zero-copy interface in each host layout, another rank's, model's or
layout's pages missing, and a killed Manager answered with clean misses.

Run by scripts/test through the engines' venv: `$(scripts/engines --python) -m pytest clients/python/tests`."""

from __future__ import annotations

import os
import random

import pytest

import okv_procs
from okv_procs import Manager, wait_until

torch = pytest.importorskip("torch")
pytest.importorskip("sglang.srt.mem_cache.hicache_storage")

from sglang.srt.mem_cache.utils import get_hash_str  # noqa: E402

import orbitkv.sglang  # noqa: E402
import sglang_host  # noqa: E402

LAYERS, HEADS, HEAD_DIM, PAGE = 2, 2, 16, 4
KV_LORA_RANK, ROPE_DIM = 32, 8
DTYPE = torch.bfloat16
PAGE_BYTES = 2 * LAYERS * PAGE * HEADS * HEAD_DIM * 2
DEVICE_TOKENS = 64
POOL = 16 << 20


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("sglang-storage"))


@pytest.fixture(scope="module")
def manager(workdir):
    m = Manager(okv_procs.shm_dir("pytest-sglang"), os.path.join(workdir, "manager.log"), "--pool-bytes", str(POOL))
    yield m
    m.stop()
    okv_procs.remove_tree(m.dir)


def host_pool(layout: str = "page_first"):  # noqa: ANN201
    """SGLang's MHA host pool."""
    return sglang_host.mha_pool(layout, layers=LAYERS, heads=HEADS, head_dim=HEAD_DIM, page=PAGE,
                                device_tokens=DEVICE_TOKENS, dtype=DTYPE)


def mla_pool(layout: str = "page_first"):  # noqa: ANN201
    """SGLang's MLA host pool (one latent row per token and layer)."""
    return sglang_host.mla_pool(layout, layers=LAYERS, kv_lora_rank=KV_LORA_RANK, rope_dim=ROPE_DIM, page=PAGE,
                                device_tokens=DEVICE_TOKENS, dtype=DTYPE)


POOLS = [("mha", "layer_first"), ("mha", "page_first"), ("mha", "page_first_direct"), ("mha", "page_head"),
         ("mla", "layer_first"), ("mla", "page_first"), ("mla", "page_first_direct")]


def make_pool(kind: str, layout: str):  # noqa: ANN201
    return host_pool(layout) if kind == "mha" else mla_pool(layout)


def backend(directory: str, pool, **options) -> orbitkv.sglang.OrbitKVStorage:  # noqa: ANN001
    """The backend as SGLang's cache controller makes it: the factory's dynamic backend, then the host pool."""
    return sglang_host.backend(directory, pool, retry_attach_s=0, **options)


_seed = [0]


def keys(count: int) -> list[str]:
    """The page hashes SGLang computes for a fresh prompt of `count` pages (its own chained hash function)."""
    _seed[0] += 1
    rng = random.Random(_seed[0] * 7919 + os.getpid())
    return get_hash_str([rng.randrange(3, 32000) for _ in range(count * PAGE)], None, page_size=PAGE)


def fill(pool, seed: int) -> None:  # noqa: ANN001
    generator = torch.Generator().manual_seed(seed)
    pool.kv_buffer.view(torch.int16).copy_(
        torch.randint(-30000, 30000, pool.kv_buffer.shape, dtype=torch.int16, generator=generator))


def page(pool, page_id: int) -> bytes:  # noqa: ANN001
    return pool.get_data_page(page_id * PAGE, flat=True).view(torch.uint8).numpy().tobytes()


def indices(page_ids: list[int]) -> torch.Tensor:
    return torch.tensor([p * PAGE + t for p in page_ids for t in range(PAGE)], dtype=torch.int64)


def test_the_factory_builds_it_with_a_namespace_of_model_rank_page_and_layout(manager):
    storage = backend(manager.dir, host_pool())
    assert type(storage) is orbitkv.sglang.OrbitKVStorage
    namespace = storage.namespace.decode()
    for field in ("model=org/model-a", "tp=0/2", "page=4", "layout=page_first", "dtype=bfloat16",
                  f"pagebytes={PAGE_BYTES}", "pool=MHATokenToKVPoolHost"):
        assert field in namespace.split(";"), namespace
    assert storage.page_bytes == PAGE_BYTES
    assert storage._pages is not None, "the MHA pool's pages copy as runs"
    storage.close()


def test_set_and_get_are_byte_exact(manager):
    storage = backend(manager.dir, host_pool())
    (key,) = keys(1)
    value = torch.randint(-30000, 30000, (PAGE_BYTES // 2,), dtype=torch.int16).view(DTYPE)
    assert not storage.exists(key)
    assert storage.get(key, torch.zeros_like(value)) is None
    assert storage.set(key, value)
    assert storage.exists(key)
    target = torch.zeros_like(value)
    assert storage.get(key, target) is target
    assert torch.equal(target.view(torch.int16), value.view(torch.int16))
    assert storage.set(key, value), "a page stored already is a success"
    several = keys(3)
    values = [torch.randint(-30000, 30000, (PAGE_BYTES // 2,), dtype=torch.int16).view(DTYPE) for _ in several]
    assert storage.batch_set(several, values)
    got = storage.batch_get(several, [torch.zeros_like(v) for v in values])
    assert all(torch.equal(g.view(torch.int16), v.view(torch.int16)) for g, v in zip(got, values))
    assert storage.get_stats().orbitkv["stored_pages"] == 4
    storage.close()


def test_batch_exists_is_the_pinned_prefix_and_the_read_takes_the_pins(manager):
    pool = host_pool()
    fill(pool, 1)
    storage = backend(manager.dir, pool)
    chain = keys(6)
    assert storage.batch_set_v1(chain[:4], indices([1, 2, 3, 4])) == [True] * 4
    assert storage.batch_exists(chain) == 4
    assert storage.batch_exists(chain[4:]) == 0
    assert storage.batch_exists(chain[1:]) == 3, "a prefix from the chain's second page"
    assert manager.pins()[1] == 2, "two pinned lookups held for the reads that follow"
    # SGLang reads the hit prefix; into other host pages
    assert storage.batch_get_v1(chain[:4], indices([10, 11, 12, 13])) == [True] * 4
    assert [page(pool, p) for p in (10, 11, 12, 13)] == [page(pool, p) for p in (1, 2, 3, 4)]
    assert storage.clear()
    wait_until(lambda: manager.pins() == (0, 0), 15, "no pin or lease left")
    storage.close()


@pytest.mark.parametrize("kind,layout", POOLS)
def test_the_page_view_is_sglangs_flat_page(kind, layout):
    pool = make_pool(kind, layout)
    fill(pool, 5)
    view = orbitkv.sglang._page_view(pool)
    assert view is not None
    assert view.data_ptr() == pool.kv_buffer.data_ptr(), "a view over the pool, not a copy"
    for p in range(pool.page_num):
        assert view[p].reshape(-1).numpy().tobytes() == page(pool, p), f"{kind} {layout}: page {p}"


@pytest.mark.parametrize("kind,layout", POOLS)
def test_interface_v1_moves_pages_between_host_pools_in_each_layout(manager, kind, layout):
    source, target = make_pool(kind, layout), make_pool(kind, layout)
    fill(source, 2)
    writer, reader = backend(manager.dir, source), backend(manager.dir, target)
    assert writer._pages is not None, f"{layout}: runs, not page by page"
    chain = keys(7)
    # two runs of consecutive pages and a lone one, out of order
    written = [5, 6, 7, 2, 3, 11, 9]
    assert writer.batch_set_v1(chain, indices(written)) == [True] * 7
    assert reader.batch_exists(chain) == 7
    read = [14, 15, 1, 2, 3, 4, 8]
    assert reader.batch_get_v1(chain, indices(read)) == [True] * 7
    for w, r in zip(written, read):
        assert page(target, r) == page(source, w), f"{layout}: page {w} -> {r}"
    # the page-at-a-time interface reads the same block: SGLang's flat page
    flat = target.get_dummy_flat_data_page()
    assert reader.get(chain[3], flat) is flat
    assert flat.view(torch.uint8).numpy().tobytes() == page(source, 2)
    assert reader.set(keys(1)[0], source.get_data_page(7 * PAGE, flat=True))
    # a chain with a gap restores its leading run only
    gap = keys(3)
    assert writer.batch_set_v1([gap[0], gap[2]], indices([1, 4])) == [True, True]
    assert reader.batch_get_v1(gap, indices([20, 21, 22])) == [True, False, False]
    writer.close()
    reader.close()


def test_held_leases_are_bounded_in_number_and_age(manager):
    pool = host_pool()
    fill(pool, 6)
    storage = backend(manager.dir, pool, max_held_leases=2)
    chains = [keys(2) for _ in range(3)]
    for i, chain in enumerate(chains):
        assert storage.batch_set_v1(chain, indices([2 * i + 1, 2 * i + 2])) == [True, True]
    assert storage.batch_exists(chains[0]) == 2 and storage.batch_exists(chains[1]) == 2
    assert manager.pins()[1] == 2 and storage.counters["leases_dropped"] == 0, "at the limit: both held"
    assert storage.batch_exists(chains[2]) == 2
    assert manager.pins()[1] == 2 and storage.counters["leases_dropped"] == 1, "past it: the oldest released"
    # the dropped one is read without its lease: a pinned lookup of its own
    assert storage.batch_get_v1(chains[0], indices([20, 21])) == [True, True]
    assert page(pool, 20) == page(pool, 1)
    storage.close()
    wait_until(lambda: manager.pins() == (0, 0), 15, "no pin or lease left")
    aging = backend(manager.dir, pool, held_lease_ttl_s=0.3)
    assert aging.batch_exists(chains[1]) == 2
    (missing,) = keys(1)
    wait_until(lambda: aging.batch_exists([missing]) == 0 and aging.counters["leases_dropped"] == 1, 15,
               "a lease older than held_lease_ttl_s released", interval_s=0.05)
    assert manager.pins() == (0, 0)
    aging.close()


def test_pages_move_through_a_region_smaller_than_the_batch(manager):
    source, target = host_pool(), host_pool()
    fill(source, 7)
    writer = backend(manager.dir, source, region_bytes=3 * PAGE_BYTES)
    reader = backend(manager.dir, target, region_bytes=3 * PAGE_BYTES)
    chain = keys(9)
    assert writer.batch_set_v1(chain, indices(list(range(1, 10)))) == [True] * 9
    assert writer._client.data_region_bytes < 9 * PAGE_BYTES
    assert reader.batch_exists(chain) == 9
    assert reader.batch_get_v1(chain, indices(list(range(11, 20)))) == [True] * 9
    assert [page(target, p) for p in range(11, 20)] == [page(source, p) for p in range(1, 10)]
    assert reader.get_stats().orbitkv["get_hit_pages"] == 9
    writer.close()
    reader.close()


def test_bad_input_is_a_counted_miss_never_an_exception(manager):
    pool = host_pool()
    storage = backend(manager.dir, pool)
    chain = keys(2)
    assert storage.batch_exists([chain[0], 42]) == 0
    assert storage.batch_get_v1([chain[0], None], indices([1, 2])) == [False, False]
    assert storage.batch_get_v1(keys=chain, host_indices=indices([1])) == [False, False], "too few host indices"
    assert storage.batch_set_v1(chain, "not indices") == [False, False]
    assert storage.set(chain[0], object()) is False
    assert storage.batch_set(chain, [torch.zeros(4)]) is False, "fewer values than keys"
    assert storage.get_stats().orbitkv["errors"] >= 4
    assert storage.batch_set_v1(chain, indices([1, 2])) == [True, True], "and it goes on working"
    storage.close()


def test_another_rank_or_model_misses(manager):
    pool = host_pool()
    fill(pool, 3)
    storage = backend(manager.dir, pool)
    chain = keys(3)
    assert storage.batch_set_v1(chain, indices([1, 2, 3])) == [True] * 3
    assert storage.batch_exists(chain) == 3
    for other in (backend(manager.dir, host_pool(), tp_rank=1), backend(manager.dir, host_pool(), model="org/b"),
                  backend(manager.dir, host_pool("layer_first"))):
        assert other.namespace != storage.namespace
        assert other.batch_exists(chain) == 0
        assert not other.exists(chain[0])
        assert other.batch_get_v1(chain, indices([5, 6, 7])) == [False] * 3
        assert other.get(chain[0], torch.zeros(PAGE_BYTES // 2, dtype=DTYPE)) is None
        other.close()
    storage.close()
    wait_until(lambda: manager.pins() == (0, 0), 15, "no pin or lease left")


def test_a_killed_manager_gives_clean_misses(workdir):
    m = Manager(okv_procs.shm_dir("pytest-sglang-gone"), os.path.join(workdir, "gone.log"), "--pool-bytes", str(POOL))
    try:
        pool = host_pool()
        fill(pool, 4)
        storage = backend(m.dir, pool)
        chain = keys(3)
        assert storage.batch_set_v1(chain, indices([1, 2, 3])) == [True] * 3
        assert storage.batch_exists(chain) == 3
        m.kill()
        value = torch.zeros(PAGE_BYTES // 2, dtype=DTYPE)
        for _ in range(2):  # the call that finds it gone, and the next, which finds no Manager to attach to
            assert storage.batch_get_v1(chain, indices([5, 6, 7])) == [False] * 3
            assert storage.batch_exists(chain) == 0
            assert not storage.exists(chain[0])
            assert storage.get(chain[0], value) is None
            assert not storage.set(chain[0], value)
            assert storage.batch_set_v1(chain, indices([1, 2, 3])) == [False] * 3
            assert storage.clear() is True
        assert storage.get_stats().orbitkv["manager_unavailable"] >= 1
        # a Manager again at the same place: the backend attaches anew (the pages died with the old one)
        m.start()
        assert storage.batch_set_v1(chain, indices([1, 2, 3])) == [True] * 3
        assert storage.batch_exists(chain) == 3
        storage.close()
        never = backend(os.path.join(workdir, "no-manager-here"), host_pool())
        assert never.batch_exists(chain) == 0 and not never.set(chain[0], value) and never.get(chain[0], value) is None
    finally:
        m.stop()
        okv_procs.remove_tree(m.dir)
