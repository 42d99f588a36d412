"""The orbitkv package against a real Manager: ORBITKV_TEST_DIR names its directory (the Java test driver in
clients/c starts one and runs this suite); without it every test is skipped."""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import time
import unittest

import orbitkv
from chain import chain_fill, chain_hash

DIR = os.environ.get("ORBITKV_TEST_DIR")
VECTORS = pathlib.Path(__file__).resolve().parents[3] / "codecs" / "src" / "test" / "resources"


@unittest.skipUnless(DIR, "ORBITKV_TEST_DIR not set (run through the clients/c test driver)")
class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = orbitkv.Client(dir=DIR, name=f"py-test-{self._testMethodName}"[:128], data_region_bytes=1 << 22)

    def tearDown(self) -> None:
        self.client.close()

    def test_put_get_round_trip_and_tiers(self) -> None:
        hashes = [chain_hash(101, i) for i in range(8)]
        blocks = [chain_fill(h, 3000 + i) for i, h in enumerate(hashes)]
        stored = self.client.put("py-ns", hashes, blocks)
        self.assertEqual(["STORED"] * 8, stored.statuses)
        found = self.client.lookup("py-ns", hashes + [chain_hash(999, 0)])
        self.assertEqual(8, found.prefix_len)
        self.assertEqual(["DRAM"] * 8 + ["MISS"], found.tiers)
        self.assertIsNone(found.lease)
        self.assertEqual(blocks, self.client.get("py-ns", hashes))

    def test_zero_copy_save_writes_straight_into_pool_slots(self) -> None:
        hashes = [chain_hash(131, i) for i in range(6)]
        blocks = [chain_fill(h, 20_000 + i) for i, h in enumerate(hashes)]
        self.assertIsNotNone(self.client.pool, "the test Manager lets engines map its pool")
        self.client.populate_pool()
        prepared = self.client.prepare("py-zero-copy", hashes, [len(b) for b in blocks])
        self.assertEqual(6, prepared.reserved)
        self.assertEqual(["RESERVED"] * 6, prepared.statuses)
        for slot, block in zip(prepared.slots, blocks):
            self.assertEqual(len(block), len(slot))
            slot[:] = block
        self.assertEqual(0, self.client.lookup("py-zero-copy", hashes).prefix_len, "nothing visible before commit")
        del slot
        prepared.slots.clear()
        committed = self.client.commit("py-zero-copy", hashes + [chain_hash(131, 99)])
        self.assertEqual(6, committed.stored)
        self.assertEqual(["STORED"] * 6 + ["MISS"], committed.statuses)
        self.assertEqual(blocks, self.client.get("py-zero-copy", hashes))
        again = self.client.prepare("py-zero-copy", hashes[:1], [len(blocks[0])])
        self.assertEqual((0, ["ALREADY_RESIDENT"], [None]), (again.reserved, again.statuses, again.slots))

    def test_save_commits_each_block_as_it_is_copied(self) -> None:
        hashes = [chain_hash(141, i) for i in range(7)]
        blocks = [chain_fill(h, 30_000 + 17 * i) for i, h in enumerate(hashes)]
        self.client.put("py-save", hashes[:2], blocks[:2])
        saved = self.client.save("py-save", hashes, blocks)
        self.assertEqual(5, saved.stored)
        self.assertEqual(["ALREADY_RESIDENT"] * 2 + ["STORED"] * 5, saved.statuses)
        self.assertEqual(blocks, self.client.get("py-save", hashes))

    def test_data_region_is_a_writable_view_without_copy(self) -> None:
        region = self.client.data_region
        self.assertFalse(region.readonly)
        region[100:104] = b"wxyz"
        h = [orbitkv.hash_from_int(-5)]
        self.client.publish(b"py-view", h, [100], [4])
        region[100:104] = b"...."
        done = self.client.read(b"py-view", h, [200], [16])
        self.assertEqual(1, done.restored)
        self.assertEqual(b"wxyz", bytes(region[200:204]))

    def test_pinned_lookup_then_read_of_the_lease_consumes_it(self) -> None:
        hashes = [chain_hash(102, i) for i in range(3)]
        self.client.put("py-lease", hashes, [chain_fill(h, 512) for h in hashes])
        found = self.client.lookup("py-lease", hashes, pin=True)
        self.assertIsNotNone(found.lease)
        assert found.lease is not None
        done = self.client.read_lease(found.lease, [0, 512, 1024], [512] * 3)
        self.assertEqual(3, done.restored)
        with self.assertRaises(orbitkv.OrbitKVError) as raised:
            self.client.release(found.lease)
        self.assertEqual(15, raised.exception.code)

    def test_bad_arguments_raise_and_the_manager_keeps_serving(self) -> None:
        h = chain_hash(103, 0)
        cases = [
            (6, lambda: self.client.submit_lookup("ns", [h] * 513)),  # a ticket is one request
            (7, lambda: self.client.lookup("ns", [b"x" * 65])),
            (7, lambda: self.client.lookup("", [h])),
            (7, lambda: self.client.lookup("n" * 257, [h])),
            (8, lambda: self.client.publish("ns", [h], [(1 << 22) - 10], [20])),
            (8, lambda: self.client.read("ns", [h], [1 << 23], [1])),
            (8, lambda: self.client.publish("ns", [h], [-1], [1])),
            (15, lambda: self.client.release(424242)),
        ]
        for code, call in cases:
            with self.assertRaises(orbitkv.OrbitKVError) as raised:
                call()
            self.assertEqual(code, raised.exception.code, str(raised.exception))
        with self.assertRaises(TypeError):
            self.client.lookup("ns", ["not bytes"])  # type: ignore[list-item]
        with self.assertRaises(ValueError):
            self.client.publish("ns", [h], [0, 1], [1])
        self.client.put("ns-after-bad", [h], [b"still serving"])
        self.assertEqual([b"still serving"], self.client.get("ns-after-bad", [h]))

    def test_a_chain_longer_than_one_request_is_split_as_the_java_client_splits_it(self) -> None:
        count = 1100
        hashes = [chain_hash(105, i) for i in range(count)]
        unpublished = [chain_hash(106, i) for i in range(900)]
        region = self.client.data_region
        for i, h in enumerate(hashes):
            region[i * 64:(i + 1) * 64] = chain_fill(h, 64)
        offsets = [i * 64 for i in range(count)]
        stored = self.client.publish("py-chain", hashes, offsets, [64] * count)
        self.assertEqual(count, stored.stored)
        self.assertEqual(["STORED"] * count, stored.statuses)
        found = self.client.lookup("py-chain", hashes + unpublished, pin=True)
        self.assertEqual(count, found.prefix_len)
        # requests of 512 keys: the third one's prefix is short (the Manager answers its first miss MISS and the
        # keys after it NOT_ATTEMPTED), so the fourth is never sent and its keys are NOT_ATTEMPTED as well
        self.assertEqual(3, found.requests)
        self.assertEqual(["DRAM"] * count + ["MISS"] + ["NOT_ATTEMPTED"] * 899, found.tiers)
        self.assertEqual([64] * count, found.lengths[:count])
        assert found.lease is not None
        self.assertEqual(3, len(found.lease.lease_ids))
        self.assertEqual((0, 512, 1024), found.lease.lease_bases)
        region[0:count * 64] = bytes(count * 64)
        done = self.client.read_lease(found.lease, offsets + [count * 64] * 900, [64] * count + [64] * 900)
        self.assertEqual(count, done.restored)
        self.assertEqual(b"".join(chain_fill(h, 64) for h in hashes), bytes(region[0:count * 64]))
        for lease_id in found.lease.lease_ids:  # the read consumed every lease of the chain
            with self.assertRaises(orbitkv.OrbitKVError) as raised:
                self.client.release(lease_id)
            self.assertEqual(15, raised.exception.code)
        self.assertEqual([chain_fill(h, 64) for h in hashes[:600]], self.client.get("py-chain", hashes[:600]))

    def test_put_and_get_move_more_blocks_than_the_region_holds_through_its_slots(self) -> None:
        # 10 blocks of 1 MiB through a 4 MiB region: three slots of 1 MiB
        blocks = [os.urandom(1 << 20) for _ in range(9)] + [os.urandom(1000)]
        hashes = [chain_hash(107, i) for i in range(len(blocks))]
        stored = self.client.put("py-slots", hashes, blocks)
        self.assertEqual(["STORED"] * len(blocks), stored.statuses)
        found = self.client.lookup("py-slots", hashes)
        self.assertEqual(len(blocks), found.prefix_len)
        self.assertEqual([len(b) for b in blocks], found.lengths)
        self.assertEqual(blocks, self.client.get("py-slots", hashes))
        # the get held the blocks under a lease until its last read, which consumed it: no pins are left
        self.assertEqual(blocks[:4], self.client.get("py-slots", hashes[:4] + [chain_hash(108, 0)] + hashes[4:]))
        with self.assertRaises(orbitkv.OrbitKVError) as raised:
            self.client.put("py-slots", [chain_hash(109, 0)], [os.urandom((1 << 22) + 1)])
        self.assertEqual(8, raised.exception.code)

    def test_packed_hashes_look_up_as_the_list_does(self) -> None:
        hashes = [chain_hash(110, i) for i in range(5)]
        self.client.put("py-packed", hashes[:3], [b"abc"] * 3)
        packed = orbitkv.PackedHashes(hashes)
        self.assertEqual(hashes, list(packed))
        self.assertEqual(hashes[4], packed[-1])
        by_list = self.client.lookup("py-packed", hashes, pin=True)
        by_packed = self.client.lookup("py-packed", packed, pin=True)
        self.assertEqual((3, by_list.tiers, by_list.lengths), (by_packed.prefix_len, by_packed.tiers, by_packed.lengths))
        assert by_list.lease is not None and by_packed.lease is not None
        self.assertEqual(by_list.lease.hashes, by_packed.lease.hashes)
        self.client.release(by_list.lease)
        self.assertEqual(3, self.client.read_lease(by_packed.lease, [0, 3, 6, 9, 12], [3] * 5).restored)
        ints = [7, -1, 1 << 70]
        self.assertEqual([orbitkv.hash_from_int(h) for h in ints], list(orbitkv.PackedHashes.from_ints(ints)))
        for bad in ([b"a" * 8, b"b" * 7], [b"x" * 65], []):
            with self.assertRaises(orbitkv.OrbitKVError) as raised:
                orbitkv.PackedHashes(bad)
            self.assertEqual(7, raised.exception.code)

    def test_eight_concurrent_tickets(self) -> None:
        hashes = [chain_hash(104, i) for i in range(8)]
        self.client.put("py-async", hashes, [chain_fill(h, 256) for h in hashes])
        tickets = [self.client.submit_lookup("py-async", hashes[: i + 1]) for i in range(8)]
        with self.assertRaises(orbitkv.OrbitKVError) as raised:
            self.client.submit_lookup("py-async", hashes[:1])
        self.assertEqual(-12, raised.exception.code)
        for i in reversed(range(8)):
            result = self.client.wait(tickets[i], 5000)
            self.assertEqual(i + 1, result.prefix_len)
        offsets = [i * 256 for i in range(8)]
        read = self.client.submit_read("py-async", hashes, offsets, [256] * 8)
        polled = None
        for _ in range(100000):
            polled = self.client.poll(read)
            if polled is not None:
                break
        self.assertIsNotNone(polled)
        assert isinstance(polled, orbitkv.ReadResult)
        self.assertEqual(8, polled.restored)
        self.assertEqual(chain_fill(hashes[7], 256), bytes(self.client.data_region[7 * 256:8 * 256]))

    def test_heartbeats_from_the_engine_loop(self) -> None:
        with orbitkv.Client(dir=DIR, name="py-invoker", data_region_bytes=4096, heartbeat_thread=False,
                            heartbeat_interval_ms=1) as invoker:
            sent = 0
            for _ in range(200000):
                sent += invoker.do_work()
                if sent >= 2:
                    break
            self.assertGreaterEqual(sent, 2)

    def test_the_heartbeat_thread_keeps_an_idle_client_attached(self) -> None:
        # the driver's Manager detaches a client silent for 1 s; this one says nothing itself for longer
        time.sleep(1.5)
        self.assertEqual(0, self.client.lookup("py-idle", [b"h"]).prefix_len)

    def test_close_waits_for_views_that_wrap_the_region(self) -> None:
        client = orbitkv.Client(dir=DIR, name="py-exported", data_region_bytes=4096)
        held = (ctypes.c_ubyte * 16).from_buffer(client.data_region)
        held[0] = 9
        with self.assertRaises(orbitkv.OrbitKVError):
            client.close()
        self.assertEqual(9, client.data_region[0])
        del held
        client.close()
        with self.assertRaises(orbitkv.OrbitKVError):
            client.lookup("ns", [b"h"])

    def test_attach_to_a_directory_without_manager_raises(self) -> None:
        with self.assertRaises(orbitkv.OrbitKVError) as raised:
            orbitkv.Client(dir=DIR + "-nobody", attach_timeout_ms=50)
        self.assertEqual(-2, raised.exception.code)


class CanonicalBytesTest(unittest.TestCase):
    def test_integer_hash_bytes(self) -> None:
        self.assertEqual(bytes([1, 0, 0, 0, 0, 0, 0, 0]), orbitkv.hash_from_int(1))
        self.assertEqual(b"\xff" * 8, orbitkv.hash_from_int(-1))
        self.assertEqual(bytes(range(8, 0, -1)), orbitkv.hash_from_int(0x0102030405060708))

    def test_state_key_shard_vectors(self) -> None:
        vectors = json.loads((VECTORS / "state-key-shard-vectors.json").read_text())
        self.assertGreater(len(vectors["vectors"]), 0)
        for vector in vectors["vectors"]:
            ns = bytes.fromhex(vector["namespaceHex"])
            h = bytes.fromhex(vector["hashHex"])
            self.assertEqual(vector["canonicalHex"], orbitkv.state_key_bytes(ns, h).hex())
            self.assertEqual(vector["digestHex"], orbitkv.state_key_digest(ns, h).hex())
            self.assertEqual(vector["shard"], orbitkv.state_key_shard(ns, h))


if __name__ == "__main__":
    unittest.main()
