"""A router's view of a Manager's KV events: a ZMQ SUB socket whose batches are decoded with vLLM's own
`KVEventBatch` (msgspec, from the installed vllm.distributed.kv_events)."""

from __future__ import annotations

import msgspec
import zmq
from vllm.distributed.kv_events import KVEventBatch

from okv_procs import wait_until


class Subscriber:
    """Every (sequence, batch) received on `topic` from the PUB socket at 127.0.0.1:`port`."""

    def __init__(self, ctx: zmq.Context, port: int, topic: str, wait_s: float = 30) -> None:
        self.topic = topic
        self.wait_s = wait_s
        self.sock = ctx.socket(zmq.SUB)
        self.sock.setsockopt_string(zmq.SUBSCRIBE, topic)
        self.sock.connect(f"tcp://127.0.0.1:{port}")
        self.decoder = msgspec.msgpack.Decoder(type=KVEventBatch)
        self.batches: list[tuple[int, KVEventBatch]] = []

    def poll(self) -> None:
        while self.sock.poll(50):
            topic, seq, payload = self.sock.recv_multipart()
            assert topic == self.topic.encode()
            self.batches.append((int.from_bytes(seq, "big"), self.decoder.decode(payload)))

    def events(self) -> list:
        return [event for _, batch in self.batches for event in batch.events]

    def wait_for(self, predicate, what: str) -> list:  # noqa: ANN001
        def check():
            self.poll()
            return predicate(self.events())
        wait_until(check, self.wait_s, what, interval_s=0.05)
        return self.events()

    def close(self) -> None:
        self.sock.close(linger=0)
