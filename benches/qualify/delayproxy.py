#!/usr/bin/env python3
"""A TCP proxy that delays every chunk by a fixed time each way (netem is not in this kernel).

    delayproxy.py PORT DELAY_MS MARK

Listens on PORT for connections an nft nat rule redirected to it, connects to each one's original destination
(SO_ORIGINAL_DST) with socket mark MARK (which the redirect rule skips) and forwards each chunk it reads DELAY_MS after
it arrived, in order, both ways. A close or reset of one side closes the other. Runs until killed.
"""

import queue
import socket
import struct
import sys
import threading
import time

SO_ORIGINAL_DST = 80
SO_MARK = 36
CHUNK = 64 * 1024


def original_dst(conn):
    raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
    return socket.inet_ntoa(raw[4:8]), struct.unpack(">H", raw[2:4])[0]


def pipe(src, dst, delay_s, done):
    """Read src, deliver each chunk to dst delay_s after it arrived."""
    chunks = queue.Queue()

    def deliver():
        try:
            while True:
                due, data = chunks.get()
                left = due - time.monotonic()
                if left > 0:
                    time.sleep(left)
                if data is None:
                    dst.shutdown(socket.SHUT_WR)
                    return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            done()

    writer = threading.Thread(target=deliver, daemon=True)
    writer.start()
    try:
        while True:
            data = src.recv(CHUNK)
            chunks.put((time.monotonic() + delay_s, data or None))
            if not data:
                return
    except OSError:
        chunks.put((time.monotonic(), None))
        done()


def serve(conn, delay_s, mark):
    try:
        dest = original_dst(conn)
        up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        up.setsockopt(socket.SOL_SOCKET, SO_MARK, mark)
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        up.connect(dest)
    except OSError as ex:
        print("connection refused upstream: %s" % ex, flush=True)
        conn.close()
        return
    print("connection %s:%d -> %s:%d" % (conn.getpeername() + dest), flush=True)
    closed = []
    lock = threading.Lock()

    def done():
        with lock:
            closed.append(1)
            if len(closed) == 1:
                return
        for s in (conn, up):
            try:
                s.close()
            except OSError:
                pass

    threading.Thread(target=pipe, args=(conn, up, delay_s, done), daemon=True).start()
    threading.Thread(target=pipe, args=(up, conn, delay_s, done), daemon=True).start()


def main():
    port, delay_ms, mark = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3], 0)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(128)
    print("listening on %d, delay %d ms each way" % (port, delay_ms), flush=True)
    while True:
        conn, _ = server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        serve(conn, delay_ms / 1000.0, mark)


if __name__ == "__main__":
    main()
