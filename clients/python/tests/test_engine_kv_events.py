"""The Manager's KV events, consumed the way a router consumes vLLM's: a ZMQ SUB socket and a ROUTER replay request,
decoded with vLLM's own `KVEventBatch` / `BlockStored` / `BlockRemoved` / `AllBlocksCleared` (msgspec, from the
installed vllm.distributed.kv_events), against a real Manager process started with --kv-events-*.

Covers a publish (BlockStored, medium CPU, the hashes as given, tokens per block from the namespace), a publish with
the blocks' lineage (parent_block_hash and token_ids, kept for the same blocks' later STORAGE events), an eviction
(BlockRemoved CPU), the move of evicted blocks to the SSD tier (BlockStored STORAGE), a replay after a gap (a late
subscriber asks the ROUTER from sequence 0), a malformed replay request (refused, counted, the Manager keeps serving),
the counters, and a block fetched from a peer Manager and admitted (two Managers on a real etcd).

Run by scripts/test through the engines' venv: `$(scripts/engines --python) -m pytest clients/python/tests`."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time

import pytest

import okv_procs
from okv_procs import Manager, free_port, wait_until

pytest.importorskip("vllm")
zmq = pytest.importorskip("zmq")
msgspec = pytest.importorskip("msgspec")

from kv_subscriber import Subscriber  # noqa: E402
from orbitkv import Client, OrbitKVError  # noqa: E402
from vllm.distributed.kv_events import (  # noqa: E402
    AllBlocksCleared,
    BlockRemoved,
    BlockStored,
    KVEventBatch,
    MEDIUM_CPU,
    MEDIUM_STORAGE,
)

TOPIC = "orbitkv-test"
BLOCK_BYTES = 64 << 10
POOL = 4 << 20                    # 64 blocks of 64 KiB: a few dozen more push the first ones out
TOKENS = 16
NAMESPACE = f"vllm;model=kv-events-test;block={TOKENS};tp=0/1".encode()
END_SEQ = (-1).to_bytes(8, "big", signed=True)
WAIT_S = 30


def hashes(tag: str, count: int) -> list[bytes]:
    return [hashlib.sha256(f"{tag}-{i}".encode()).digest() for i in range(count)]


def blocks(count: int, seed: int) -> list[bytes]:
    return [bytes([(seed + i) & 0xFF]) * BLOCK_BYTES for i in range(count)]


def stored(events: list, medium: str) -> set[bytes]:
    return {h for e in events if isinstance(e, BlockStored) and e.medium == medium for h in e.block_hashes}


def removed(events: list, medium: str) -> set[bytes]:
    return {h for e in events if isinstance(e, BlockRemoved) and e.medium == medium for h in e.block_hashes}


def replay(ctx: zmq.Context, port: int, start: int) -> list[tuple[int, KVEventBatch]]:
    """Ask the ROUTER for every kept batch from `start`, as vLLM's reference subscriber does, up to the end marker."""
    sock = ctx.socket(zmq.DEALER)
    sock.connect(f"tcp://127.0.0.1:{port}")
    try:
        sock.send_multipart([b"", start.to_bytes(8, "big")])
        decoder = msgspec.msgpack.Decoder(type=KVEventBatch)
        out = []
        deadline = time.monotonic() + WAIT_S
        while True:
            assert sock.poll(max(1, int((deadline - time.monotonic()) * 1000))), "replay: no end marker in time"
            empty, topic, seq, payload = sock.recv_multipart()
            assert empty == b""
            if seq == END_SEQ:
                assert topic == b"" and payload == b""
                return out
            assert topic == TOPIC.encode()
            out.append((int.from_bytes(seq, "big"), decoder.decode(payload)))
    finally:
        sock.close(linger=0)


@pytest.fixture(scope="module")
def ports():
    return free_port(), free_port()


@pytest.fixture(scope="module")
def manager(tmp_path_factory, ports):
    workdir = str(tmp_path_factory.mktemp("kv-events"))
    ssd_root = tempfile.mkdtemp(prefix="orbitkv-kv-events-ssd-", dir=os.environ.get("ORBITKV_SSD_TMP", "/var/tmp"))
    pub, rep = ports
    m = Manager(okv_procs.shm_dir("kv-events"), os.path.join(workdir, "manager.log"),
                "--pool-bytes", str(POOL), "--max-block-bytes", str(BLOCK_BYTES),
                "--ssd-dir", ssd_root, "--ssd-bytes", "64m", "--ssd-staging-bytes", "8m",
                "--kv-events-endpoint", f"tcp://*:{pub}", "--kv-events-replay-endpoint", f"tcp://*:{rep}",
                "--kv-events-topic", TOPIC)
    yield m
    m.stop()
    okv_procs.remove_tree(m.dir)
    shutil.rmtree(ssd_root, ignore_errors=True)


@pytest.fixture(scope="module")
def zctx():
    ctx = zmq.Context()
    yield ctx
    ctx.term()


@pytest.fixture(scope="module")
def subscriber(manager, zctx, ports):
    sub = Subscriber(zctx, ports[0], TOPIC)
    # ZMQ's slow joiner: publish a probe until the subscription is seen, so that nothing of the tests is lost
    with Client(dir=manager.dir, name="kv-events-probe", data_region_bytes=4 << 20) as client:
        probe = hashes("probe", 64)
        sent = 0

        def seen():
            nonlocal sent
            if sent < len(probe):
                client.put(b"probe", [probe[sent]], [b"p" * 4096])
                sent += 1
            sub.poll()
            return stored(sub.events(), MEDIUM_CPU) & set(probe)
        wait_until(seen, WAIT_S, "the subscription to see a probe block", interval_s=0.1)
    yield sub
    sub.close()


@pytest.fixture(scope="module")
def client(manager):
    with Client(dir=manager.dir, name="kv-events-test", data_region_bytes=16 << 20) as c:
        yield c


def test_publish_is_block_stored_on_cpu_with_the_hashes_as_given(subscriber, client):
    keys = hashes("publish", 6)
    client.put(NAMESPACE, keys, blocks(6, 1))
    events = subscriber.wait_for(lambda ev: set(keys) <= stored(ev, MEDIUM_CPU), "BlockStored CPU of the publish")
    mine = [e for e in events if isinstance(e, BlockStored) and e.block_hashes[0] in set(keys)]
    assert [e.block_hashes[0] for e in mine] == keys, "one event per block, in publish order"
    for e in mine:
        assert type(e.block_hashes[0]) is bytes and len(e.block_hashes[0]) == 32
        assert e.medium == MEDIUM_CPU
        assert e.block_size == TOKENS, "tokens per block come from the namespace's block= field"
        assert e.parent_block_hash is None and e.token_ids == [] and e.lora_id is None and e.lora_name is None
    # another namespace without block=: the size is unknown, 0 (as vLLM's own offloading events say)
    other = hashes("plain", 1)
    client.put(b"plain-namespace", other, blocks(1, 2))
    events = subscriber.wait_for(lambda ev: set(other) <= stored(ev, MEDIUM_CPU), "BlockStored of a plain namespace")
    assert [e.block_size for e in events if isinstance(e, BlockStored) and e.block_hashes == other] == [0]
    # publishing the same key again stores nothing twice, so no second event
    client.put(NAMESPACE, keys[:1], blocks(1, 1))
    subscriber.poll()
    assert [e for e in subscriber.events() if isinstance(e, BlockStored) and e.block_hashes == keys[:1]].__len__() == 1


def test_the_lineage_a_publish_gives_is_in_block_stored_on_cpu_and_again_on_storage(subscriber, client):
    keys = hashes("lineage", 3)
    tokens = [list(range(100 * i, 100 * i + TOKENS)) for i in range(3)]
    tokens[2][-1] = 2**31 - 1
    parents = [b"\x07" * 32, keys[0], keys[1]]
    region = client.data_region
    for i, block in enumerate(blocks(3, 5)):
        region[i * BLOCK_BYTES:(i + 1) * BLOCK_BYTES] = block
    published = client.publish(NAMESPACE, keys, [i * BLOCK_BYTES for i in range(3)], [BLOCK_BYTES] * 3,
                               parents=parents, token_ids=tokens)
    assert published.stored == 3
    events = subscriber.wait_for(lambda ev: set(keys) <= stored(ev, MEDIUM_CPU), "BlockStored CPU with lineage")
    mine = {e.block_hashes[0]: e for e in events if isinstance(e, BlockStored) and e.medium == MEDIUM_CPU
            and e.block_hashes[0] in set(keys)}
    for i, key in enumerate(keys):
        assert mine[key].parent_block_hash == parents[i]
        assert mine[key].token_ids == tokens[i]
        assert mine[key].block_size == TOKENS
    # a parent alone, tokens alone
    alone = hashes("lineage-alone", 2)
    client.publish(NAMESPACE, alone, [0, BLOCK_BYTES], [BLOCK_BYTES] * 2, parents=[keys[2], None],
                   token_ids=[None, [5] * TOKENS])
    events = subscriber.wait_for(lambda ev: set(alone) <= stored(ev, MEDIUM_CPU), "BlockStored CPU of partial lineage")
    got = {e.block_hashes[0]: e for e in events if isinstance(e, BlockStored) and e.block_hashes[0] in set(alone)}
    assert (got[alone[0]].parent_block_hash, got[alone[0]].token_ids) == (keys[2], [])
    assert (got[alone[1]].parent_block_hash, got[alone[1]].token_ids) == (None, [5] * TOKENS)
    # the Manager remembers the lineage: the same blocks written to SSD later carry it too
    filler = hashes("lineage-filler", 2 * POOL // BLOCK_BYTES)
    for start in range(0, len(filler), 16):
        client.put(b"filler", filler[start:start + 16], blocks(len(filler[start:start + 16]), 6))
    events = subscriber.wait_for(lambda ev: set(keys) <= stored(ev, MEDIUM_STORAGE), "BlockStored STORAGE with lineage")
    moved = {e.block_hashes[0]: e for e in events if isinstance(e, BlockStored) and e.medium == MEDIUM_STORAGE
             and e.block_hashes[0] in set(keys)}
    assert [moved[k].token_ids for k in keys] == tokens
    assert [moved[k].parent_block_hash for k in keys] == parents


def test_a_lineage_past_the_limit_is_refused_and_nothing_stored(client):
    key = hashes("lineage-too-long", 1)
    with pytest.raises(OrbitKVError) as refused:
        client.publish(NAMESPACE, key, [0], [BLOCK_BYTES], token_ids=[[1] * 2049])
    assert refused.value.code == 6
    with pytest.raises(OrbitKVError) as refused:
        client.publish(NAMESPACE, key, [0], [BLOCK_BYTES], parents=[b"p" * 65])
    assert refused.value.code == 7
    assert client.lookup(NAMESPACE, key).prefix_len == 0


def test_eviction_is_block_removed_on_cpu_and_the_move_to_ssd_block_stored_on_storage(subscriber, client):
    keys = hashes("evicted", 4)
    client.put(NAMESPACE, keys, blocks(4, 3))
    subscriber.wait_for(lambda ev: set(keys) <= stored(ev, MEDIUM_CPU), "BlockStored CPU before eviction")
    filler = hashes("filler", 2 * POOL // BLOCK_BYTES)
    for start in range(0, len(filler), 16):
        client.put(b"filler", filler[start:start + 16], blocks(len(filler[start:start + 16]), 4))
    events = subscriber.wait_for(lambda ev: set(keys) <= removed(ev, MEDIUM_CPU) and set(keys) <= stored(ev, MEDIUM_STORAGE),
                                 "BlockRemoved CPU and BlockStored STORAGE of the evicted blocks")
    for e in events:
        if isinstance(e, BlockStored) and e.medium == MEDIUM_STORAGE and e.block_hashes[0] in set(keys):
            assert e.block_size == TOKENS
    assert client.lookup(NAMESPACE, keys).tiers[0] == "SSD"


def test_an_ssd_eviction_is_block_removed_on_storage_after_its_block_stored(subscriber, client):
    # 64 MiB of SSD holds 1,024 blocks of 64 KiB: push more than that through DRAM onto SSD
    more = iter(hashes("ssd-filler", 4096))

    def ssd_evicted():
        batch = [next(more) for _ in range(32)]
        client.put(b"ssd-filler", batch, blocks(32, 8))
        subscriber.poll()
        return removed(subscriber.events(), MEDIUM_STORAGE)
    gone = wait_until(ssd_evicted, 4 * WAIT_S, "a BlockRemoved STORAGE", interval_s=0)
    events = subscriber.events()
    for h in gone:
        first_removed = next(i for i, e in enumerate(events)
                             if isinstance(e, BlockRemoved) and e.medium == MEDIUM_STORAGE and h in e.block_hashes)
        assert any(isinstance(e, BlockStored) and e.medium == MEDIUM_STORAGE and h in e.block_hashes
                   for e in events[:first_removed]), "an SSD block is removed only after it was stored"


def test_a_late_subscriber_recovers_the_gap_by_replay(manager, subscriber, client, zctx, ports):
    late = Subscriber(zctx, ports[0], TOPIC)
    try:
        keys = hashes("gap", 3)
        probes = iter(hashes("late-probe", 300))

        def joined():
            client.put(NAMESPACE, [next(probes)], blocks(1, 5))   # a new key each time: a new event each time
            late.poll()
            return late.batches
        wait_until(joined, WAIT_S, "the late subscriber's first batch", interval_s=0.1)
        client.put(NAMESPACE, keys, blocks(3, 6))
        late.wait_for(lambda ev: set(keys) <= stored(ev, MEDIUM_CPU), "the late subscriber sees new blocks")
        first_seen = late.batches[0][0]
        assert first_seen > 0, "it joined after the first batches"
        replayed = replay(zctx, ports[1], 0)
        seqs = [s for s, _ in replayed]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[0] == 0, "contiguous from the start"
        assert replayed[0][1].events == [AllBlocksCleared()], "the stream opens with AllBlocksCleared"
        assert replayed[0][1].data_parallel_rank == 0
        # the gap: what the first subscriber saw before the late one joined is in the replay, byte for byte decoded
        earlier = {s: b for s, b in subscriber.batches if s < first_seen}
        assert earlier, "the first subscriber saw batches the late one missed"
        by_seq = dict(replayed)
        for s, batch in earlier.items():
            assert by_seq[s].events == batch.events
        # a replay from the middle starts there
        from_middle = replay(zctx, ports[1], first_seen)
        assert from_middle[0][0] == first_seen and from_middle[0][1].events == late.batches[0][1].events
    finally:
        late.close()


def test_a_malformed_replay_request_is_refused_and_counted(manager, zctx, ports):
    before = manager.counters().get("KV events: replay requests refused (malformed)", 0)
    sock = zctx.socket(zmq.DEALER)
    sock.connect(f"tcp://127.0.0.1:{ports[1]}")
    try:
        sock.send_multipart([b"", b"short"])
        wait_until(lambda: manager.counters().get("KV events: replay requests refused (malformed)", 0) > before,
                   WAIT_S, "the malformed request counted")
    finally:
        sock.close(linger=0)
    assert replay(zctx, ports[1], 0), "still serving replays"


def test_counters(manager, subscriber):
    def drained():
        c = manager.counters()
        queued = c.get("KV events: residency records queued for the publisher", 0)
        # every queued record went out, plus the opening AllBlocksCleared
        return c if queued > 0 and c.get("KV events: events published", 0) == queued + 1 else None
    try:
        counters = wait_until(drained, WAIT_S, "every queued record published")
    except TimeoutError:
        raise AssertionError({k: v for k, v in manager.counters().items() if k.startswith("KV events")}) from None
    assert counters["KV events: batches published"] >= 2
    assert counters["KV events: residency records dropped (publisher ring full)"] == 0
    assert counters["KV events: batches the PUB socket did not take"] == 0
    assert counters["KV events: replay requests served"] >= 1


# -- a block fetched from a peer Manager -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zctx):
    workdir = str(tmp_path_factory.mktemp("kv-events-peer"))
    tag = f"kv-events-{os.getpid()}"
    etcd = okv_procs.Etcd(tag)
    managers: list[Manager] = []
    try:
        common = ["--etcd-endpoints", etcd.endpoints, "--cluster-name", tag, "--catalog-nodes", "a,b",
                  "--pool-bytes", str(POOL), "--max-block-bytes", str(BLOCK_BYTES)]
        a = Manager(okv_procs.shm_dir("kv-events-a"), os.path.join(workdir, "manager-a.log"), *common,
                    "--node-id", "a")
        managers.append(a)
        port = free_port()
        b = Manager(okv_procs.shm_dir("kv-events-b"), os.path.join(workdir, "manager-b.log"), *common,
                    "--node-id", "b", "--peer-admission", "always", "--kv-events-endpoint", f"tcp://*:{port}",
                    "--kv-events-topic", TOPIC)
        managers.append(b)
        yield a, b, port
    finally:
        for m in managers:
            m.stop()
            okv_procs.remove_tree(m.dir)
        etcd.stop()


def test_a_block_fetched_from_a_peer_and_admitted_is_block_stored_on_cpu(cluster, zctx):
    a, b, port = cluster
    sub = Subscriber(zctx, port, TOPIC)
    try:
        keys = hashes("peer", 4)
        with Client(dir=a.dir, name="kv-events-source", data_region_bytes=4 << 20) as source:
            source.put(NAMESPACE, keys, blocks(4, 7))
        with Client(dir=b.dir, name="kv-events-requester", data_region_bytes=4 << 20) as requester:
            def peer_answer():
                answer = requester.lookup(NAMESPACE, keys, pin=True, peers=True)
                if answer.prefix_len == len(keys) and set(answer.tiers[:len(keys)]) == {"PEER"}:
                    return answer
                if answer.lease is not None:
                    requester.release(answer.lease)
                return None
            found = wait_until(peer_answer, WAIT_S, "B finds A's blocks as PEER")
            read = requester.read_lease(found.lease, [i * BLOCK_BYTES for i in range(len(keys))])
            assert read.restored == len(keys) and read.statuses == ["PEER"] * len(keys), read
            assert bytes(requester.data_region[:BLOCK_BYTES]) == blocks(4, 7)[0]
            events = sub.wait_for(lambda ev: set(keys) <= stored(ev, MEDIUM_CPU),
                                  "B's BlockStored CPU for the admitted peer blocks")
            assert requester.lookup(NAMESPACE, keys).tiers[:len(keys)] == ["DRAM"] * len(keys)
        assert all(e.block_size == TOKENS for e in events if isinstance(e, BlockStored) and e.block_hashes[0] in keys)
    finally:
        sub.close()
