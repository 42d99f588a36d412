"""A rogue process's bad input against the Managers' endpoints (the RogueInput scenario runs it in the orchestrator,
whose control namespace is a host of its own on the bridge).

Datagrams at the catalog port: random bytes of random lengths; Aeron frames with every type (setup, data, pad, NAK,
status message, RTT measurement) whose fields are drawn from bad and plausible values: the catalog's stream id and
others, foreign session ids, frame lengths shorter, longer or negative against the datagram, term offsets outside the
term, and the same forged frames replayed. At the transfer port: connections that send random bytes, a length word far
beyond any frame, a half frame and then nothing (held open until the end), and connect-and-close storms.
"""

import random
import socket
import struct
import threading
import time

CATALOG_STREAM_ID = 1201  # PeerTransport.DEFAULT_STREAM_ID
AERON_TYPES = (0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06)
DATAGRAMS_PER_ROUND = 40
ROUND_S = 0.05
MAX_HELD = 16


class Rogue:
    def __init__(self, targets, udp_port, tcp_port, seed):
        self.targets = targets
        self.udp_port = udp_port
        self.tcp_port = tcp_port
        self.rng = random.Random(seed)
        self.stop_flag = threading.Event()
        self.sent = {"datagrams": 0, "replayed": 0, "tcpConnections": 0, "tcpRefused": 0, "tcpBytes": 0}
        self.held = []
        self.threads = [threading.Thread(target=self._udp, daemon=True, name="rogue-udp"),
                        threading.Thread(target=self._tcp, daemon=True, name="rogue-tcp")]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(5)
        for s in self.held:
            try:
                s.close()
            except OSError:
                pass
        self.held = []

    def _int(self):
        r = self.rng
        return r.choice([0, 1, -1, 0x7FFFFFFF, -0x80000000, r.randrange(-2 ** 31, 2 ** 31), r.randrange(0, 64),
                         CATALOG_STREAM_ID])

    def _aeron_frame(self):
        r = self.rng
        kind = r.choice(AERON_TYPES)
        body = bytearray(r.randbytes(r.choice([0, 8, 16, 24, 32, 64, 1400])))
        flags = r.choice([0, 0x80, 0x40, 0xC0, 0xFF])
        stream = r.choice([CATALOG_STREAM_ID, CATALOG_STREAM_ID, self._int()])
        if kind == 0x05:  # setup: term offset, session, stream, initial term, active term, term length, mtu, ttl
            fields = struct.pack("<iiiiiiii", self._int(), self._int(), stream, self._int(), self._int(),
                                 r.choice([64 * 1024, 1 << 16, 0, -1, 3, 1 << 30]), r.choice([1408, 0, -1, 65504]),
                                 0)
        else:  # data-like: term offset, session, stream, term id, reserved value
            fields = struct.pack("<iiiiq", self._int(), self._int(), stream, self._int(), r.randrange(-2 ** 63, 2 ** 63))
        length = 8 + len(fields) + len(body)
        frame_length = r.choice([length, length, 0, -length, length * 2, 8, 0x7FFFFFFF])
        return struct.pack("<iBBH", frame_length, r.choice([0, 0, 1, 255]), flags, kind) + fields + bytes(body)

    def _udp(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        replay = []
        r = self.rng
        while not self.stop_flag.is_set():
            for _ in range(DATAGRAMS_PER_ROUND):
                target = (r.choice(self.targets), self.udp_port)
                choice = r.random()
                if choice < 0.2:
                    frame = r.randbytes(r.randrange(0, 1500))
                elif choice < 0.3 and replay:
                    frame = r.choice(replay)
                    self.sent["replayed"] += 1
                else:
                    frame = self._aeron_frame()
                    if len(replay) < 64:
                        replay.append(frame)
                try:
                    sock.sendto(frame, target)
                    self.sent["datagrams"] += 1
                except OSError:
                    pass
            time.sleep(ROUND_S)
        sock.close()

    def _tcp(self):
        r = self.rng
        while not self.stop_flag.is_set():
            target = (r.choice(self.targets), self.tcp_port)
            try:
                s = socket.create_connection(target, timeout=1)
            except OSError:
                self.sent["tcpRefused"] += 1
                time.sleep(0.05)
                continue
            self.sent["tcpConnections"] += 1
            choice = r.random()
            try:
                if choice < 0.4:
                    data = r.randbytes(r.randrange(1, 4096))
                elif choice < 0.6:
                    data = struct.pack("<i", r.choice([0x7FFFFFFF, -1, 1 << 30])) + r.randbytes(60)
                elif choice < 0.8:
                    data = r.randbytes(r.randrange(1, 12))  # half a header, then silence
                else:
                    data = b""
                s.sendall(data)
                self.sent["tcpBytes"] += len(data)
                if 0.6 <= choice < 0.8 and len(self.held) < MAX_HELD:
                    self.held.append(s)
                else:
                    s.close()
            except OSError:
                s.close()
            time.sleep(0.02)
