"""The processes of a qualification run: etcd members, Managers and engines on the virtual hosts of scripts/qualify-net,
the traffic the engines drive, and a sampler of every Manager's CnC counters.

This module runs inside the run's control namespace (okq-RUN-ctl), so etcd and the hosts are reached at their 10.x
addresses directly; every other process is started in its own host's namespace through `ip netns exec`.
"""

import base64
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import urllib.request

import cnc

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NET = os.path.join(ROOT, "scripts", "qualify-net")

ETCD_CLIENT_PORT = 2379
ETCD_PEER_PORT = 2380
PEER_PORT = 7470  # the catalog's Aeron UDP endpoint on every host
TRANSFER_PORT = 7471  # the built-in transport's TCP endpoint on every host

# Counter ids of the Manager (manager/src/test/resources/io/orbitkv/manager/counter-layout.txt).
PINS_ACTIVE = 17
LEASES_ACTIVE = 18
CLIENTS_ATTACHED = 19
REGISTRATION_STATE = 70
VIEW_COMPLETE = 71
FENCED_CAUSE = 72
REMOTE_WORK = 73
MEMBERS_IN_VIEW = 74
INCOMPLETE_SHARDS = 103
INCARNATION = 140
EPOCH = 144
SOURCE_SESSIONS = 163
SOURCE_PINNED_BYTES = 164
QUARANTINED_SESSIONS = 171
QUARANTINED_BYTES = 172
EXPORT_STAGING_BYTES = 179
FETCHES_ACTIVE = 198
READS_IN_FLIGHT = 199
REGISTERED = 2

# What must be back to 0 on every Manager once traffic stopped and the session TTL passed.
DRAINED = {
    PINS_ACTIVE: "pins", LEASES_ACTIVE: "leases", SOURCE_SESSIONS: "source sessions",
    SOURCE_PINNED_BYTES: "budget bytes", QUARANTINED_SESSIONS: "quarantined sessions",
    QUARANTINED_BYTES: "quarantined bytes", EXPORT_STAGING_BYTES: "staged export bytes",
    FETCHES_ACTIVE: "requester fetches", READS_IN_FLIGHT: "requester reads",
}

# ReplayEngine's records (bench-harness ReplayEngineProcess): big-endian.
ENGINE_HELLO = 0x52504C59
ENGINE_END = -1
ENGINE_RECORD = struct.Struct(">iiiiqqq?")
ENGINE_IN_FLIGHT = 3  # the one it serves and two queued, as the bench keeps
ENGINE_CONTROL_BYTES = 64

SAMPLE_INTERVAL_S = 0.2


def log(msg):
    sys.stderr.write("qualify: %s\n" % msg)
    sys.stderr.flush()


def net(*args):
    subprocess.run([NET] + [str(a) for a in args], check=True, stdout=subprocess.PIPE)


def node_addr(node):
    return subprocess.run([NET, "addr", node], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def wait_until(predicate, timeout_s, interval_s=0.1):
    """Poll predicate until it returns something true or timeout_s passes; returns its last value."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval_s)


class Proc:
    """One process started in a namespace, with its log and whether a scenario killed it on purpose."""

    def __init__(self, kind, node, ns, argv, log_path, env=None, pipes=False):
        self.kind = kind
        self.node = node
        self.log_path = log_path
        self.killed_on_purpose = False
        self.log_file = open(log_path, "ab")
        self.popen = subprocess.Popen(
            ["ip", "netns", "exec", ns] + argv,
            stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
            stdout=subprocess.PIPE if pipes else self.log_file,
            stderr=self.log_file, env=env)

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.pid, sig)

    def kill9(self):
        self.killed_on_purpose = True
        self.signal(signal.SIGKILL)
        self.popen.wait(10)

    def stop(self, timeout_s=15):
        """SIGTERM, then SIGKILL after timeout_s."""
        if self.alive():
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.popen.wait(10)
        self.log_file.close()

    def describe(self):
        code = self.popen.poll()
        return "%s %s (pid %d, %s)" % (self.kind, self.node, self.pid, "alive" if code is None else "exit %s" % code)

    def log_tail(self, lines=15):
        try:
            with open(self.log_path, "rb") as f:
                return b"".join(f.readlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""


class Etcd:
    """A cluster of etcd members, one per etcd host (e1, e2, ...), plaintext, on the hosts' addresses."""

    def __init__(self, run, members, work):
        self.run = run
        self.members = ["e%d" % (i + 1) for i in range(members)]
        self.addr = {m: node_addr(m) for m in self.members}
        self.work = work
        self.procs = {}
        self.all_procs = []

    def client_url(self, member):
        return "http://%s:%d" % (self.addr[member], ETCD_CLIENT_PORT)

    def endpoints(self):
        return ",".join(self.client_url(m) for m in self.members)

    def start(self, member):
        peers = ",".join("%s=http://%s:%d" % (m, self.addr[m], ETCD_PEER_PORT) for m in self.members)
        url = self.client_url(member)
        argv = ["etcd", "--name", member, "--data-dir", os.path.join(self.work, "etcd-" + member),
                "--listen-client-urls", url, "--advertise-client-urls", url,
                "--listen-peer-urls", "http://%s:%d" % (self.addr[member], ETCD_PEER_PORT),
                "--initial-advertise-peer-urls", "http://%s:%d" % (self.addr[member], ETCD_PEER_PORT),
                "--initial-cluster", peers, "--initial-cluster-state", "new",
                "--initial-cluster-token", "okq-" + self.run]
        proc = Proc("etcd", member, "okq-%s-%s" % (self.run, member), argv,
                    os.path.join(self.work, "etcd-%s.log" % member))
        self.procs[member] = proc
        self.all_procs.append(proc)
        return proc

    def start_all(self, timeout_s=60):
        for m in self.members:
            self.start(m)
        if not wait_until(lambda: all(self.healthy(m) for m in self.members), timeout_s, 0.2):
            raise RuntimeError("etcd not healthy within %d s: %s" % (timeout_s, [p.describe() for p in self.procs.values()]))

    def healthy(self, member):
        try:
            with urllib.request.urlopen(self.client_url(member) + "/health", timeout=1) as r:
                return json.loads(r.read()).get("health") in ("true", True)
        except Exception:
            return False

    def call(self, path, body, member=None, timeout_s=2):
        """POST to etcd's v3 JSON gateway at the first member that answers."""
        errors = []
        for m in [member] if member else self.members:
            if member is None and not self.procs[m].alive():
                continue
            try:
                req = urllib.request.Request(self.client_url(m) + path, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=timeout_s) as r:
                    return json.loads(r.read())
            except Exception as ex:
                errors.append("%s: %s" % (m, ex))
        raise RuntimeError("etcd %s failed: %s" % (path, "; ".join(errors)))

    def leader(self):
        """The member that leads, or None."""
        for m in self.members:
            if not self.procs[m].alive():
                continue
            try:
                status = self.call("/v3/maintenance/status", {}, member=m)
                if status.get("leader") and status["leader"] == status["header"]["member_id"]:
                    return m
            except RuntimeError:
                continue
        return None

    def prefix(self, prefix):
        """{key: value} of every key under prefix."""
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        answer = self.call("/v3/kv/range", {"key": b64(prefix), "range_end": b64(end)})
        return {base64.b64decode(kv["key"]).decode(): base64.b64decode(kv.get("value", "")).decode()
                for kv in answer.get("kvs", [])}


def b64(text):
    return base64.b64encode(text.encode()).decode()


def override(flags, extra):
    """flags (option, value pairs) with extra's pairs replacing the values of the options both name and appended
    otherwise (the Manager refuses an option given twice)."""
    pairs = dict(zip(flags[0::2], flags[1::2]))
    pairs.update(zip(extra[0::2], extra[1::2]))
    return [x for option, value in pairs.items() for x in (option, value)]


class Manager:
    """The Manager of one host: its flags, its current process and every process it had."""

    def __init__(self, run, node, index, dir_path, work, flags, env):
        self.run = run
        self.node = node
        self.index = index
        self.addr = node_addr(node)
        self.dir = dir_path
        self.work = work
        self.flags = flags
        self.env = env
        self.proc = None
        self.procs = []
        self.final_snapshots = []  # the last CnC read of every process that ended

    def start(self, extra_env=None, extra_flags=()):
        """Start a process on the Manager's directory; extra_env adds to its environment (a preloaded library),
        extra_flags to its flags (an SSD tier)."""
        argv = [os.path.join(ROOT, "scripts", "orbitkv"), "manager", "--dir", self.dir, "--node-id", self.node,
                "--peer-endpoint", "%s:%d" % (self.addr, PEER_PORT),
                "--transfer-endpoint", "%s:%d" % (self.addr, TRANSFER_PORT)] + override(self.flags, extra_flags)
        env = dict(self.env, **extra_env) if extra_env else self.env
        self.proc = Proc("manager", self.node, "okq-%s-%s" % (self.run, self.node), argv,
                         os.path.join(self.work, "manager-%s.log" % self.node), env=env)
        self.procs.append(self.proc)
        return self.proc

    def snapshot(self, ids=None):
        """The CnC of the current process, or None before it is ready (a killed process's file names its pid).
        With ids, only those counters (see cnc.read)."""
        snap = cnc.read(os.path.join(self.dir, "cnc.dat"), ids)
        if snap is None or self.proc is None or snap.pid != self.proc.pid:
            return None
        return snap

    def await_ready(self, timeout_s=120):
        def ready():
            if not self.proc.alive():
                raise RuntimeError("Manager %s exited while starting:\n%s" % (self.node, self.proc.log_tail()))
            return self.snapshot() is not None
        if not wait_until(ready, timeout_s, 0.1):
            raise RuntimeError("Manager %s not ready in %d s:\n%s" % (self.node, timeout_s, self.proc.log_tail()))

    def keep_final(self):
        """Read the CnC of the current process once more (it stays mapped readable after the process ended)."""
        snap = cnc.read(os.path.join(self.dir, "cnc.dat"))
        if snap is not None and snap.pid == self.proc.pid:
            self.final_snapshots.append(snap)
        return snap


class Engine:
    """One ReplayEngine process (bench-harness) attached to the Manager of its host, fed request indices."""

    def __init__(self, run, node, index, manager_dir, work, java, jvm_flags, classpath, block_bytes, max_chain,
                 trace, limit, on_record):
        self.node = node
        self.index = index
        self.control_path = os.path.join(work, "engine-%s.control" % node)
        with open(self.control_path, "wb") as f:
            f.write(struct.pack("<i", 1) + bytes(ENGINE_CONTROL_BYTES - 4))
        self.argv = [java] + jvm_flags + ["-Xmx256m", "-cp", classpath, "io.orbitkv.bench.ReplayEngine", str(index),
                                          manager_dir, self.control_path, str(block_bytes), str(max_chain), "true",
                                          trace, str(limit)]
        self.ns = "okq-%s-%s" % (run, node)
        self.log_path = os.path.join(work, "engine-%s.log" % node)
        self.on_record = on_record
        self.lock = threading.Lock()
        self.failed = None
        self.down = False  # killed on purpose and not started again yet: the traffic waits
        self.procs = []
        self._launch()

    def _launch(self):
        self.proc = Proc("engine", self.node, self.ns, self.argv, self.log_path, pipes=True)
        self.procs.append(self.proc)
        self.in_flight = threading.Semaphore(ENGINE_IN_FLIGHT)
        self.outstanding = 0
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, args=(self.proc,), name="engine-reader-" + self.node,
                                       daemon=True)
        self.reader.start()

    def kill9(self):
        """kill -9 of the engine process; its outstanding requests are lost, the traffic waits until restart()."""
        self.down = True
        self.proc.kill9()

    def stop_for_restart(self):
        """End the engine process on purpose (its end record, then SIGKILL if it lingers); the traffic waits."""
        self.down = True
        self.proc.killed_on_purpose = True
        try:
            self.proc.popen.stdin.write(struct.pack(">i", ENGINE_END))
            self.proc.popen.stdin.flush()
            self.proc.popen.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill9()

    def restart(self, timeout_s=60, peers=None):
        """Start the engine process again (after kill9 or stop_for_restart); peers=False makes its lookups local only."""
        self.proc.stop(1)
        if peers is not None:
            self.argv[-3] = "true" if peers else "false"
        self._launch()
        self.await_ready(timeout_s)
        self.down = False

    def set_manager_up(self, up):
        with open(self.control_path, "r+b") as f:
            f.write(struct.pack("<i", 1 if up else 0))

    def _read(self, proc):
        out = proc.popen.stdout
        try:
            hello = out.read(16)
            if len(hello) < 16 or struct.unpack(">iqi", hello)[0] != ENGINE_HELLO:
                raise RuntimeError("no hello")
            self.ready.set()
            while True:
                head = out.read(4)
                if len(head) < 4:
                    raise RuntimeError("stdout closed")
                (index,) = struct.unpack(">i", head)
                if index == ENGINE_END:
                    return
                rest = out.read(ENGINE_RECORD.size - 4)
                if len(rest) < ENGINE_RECORD.size - 4:
                    raise RuntimeError("stdout closed mid-record")
                record = ENGINE_RECORD.unpack(head + rest)
                with self.lock:
                    self.outstanding -= 1
                self.in_flight.release()
                self.on_record(self.index, time.monotonic(), record)
        except Exception as ex:
            if proc.killed_on_purpose:
                return
            if self.failed is None:
                self.failed = "engine %s: %s (exit %s)\n%s" % (self.node, ex, proc.popen.poll(), proc.log_tail())
            self.ready.set()

    def await_ready(self, timeout_s=60):
        self.ready.wait(timeout_s)
        if self.failed or not self.ready.is_set():
            raise RuntimeError(self.failed or "engine %s not attached in %d s" % (self.node, timeout_s))

    def dispatch(self, index, stop):
        """Send one request index once fewer than ENGINE_IN_FLIGHT are outstanding; False if stop was set first."""
        while self.down:
            if stop.wait(0.05) or self.failed:
                return False
        while not self.in_flight.acquire(timeout=0.1):
            if stop.is_set() or self.failed:
                return False
            if self.down:
                return self.dispatch(index, stop)
        with self.lock:
            self.outstanding += 1
        proc = self.proc
        try:
            proc.popen.stdin.write(struct.pack(">i", index))
            proc.popen.stdin.flush()
        except OSError as ex:
            if proc.killed_on_purpose:  # killed by the scenario meanwhile: sent again once it is back
                return self.dispatch(index, stop)
            self.failed = "engine %s refused request %d: %s" % (self.node, index, ex)
            return False
        return True

    def idle(self):
        with self.lock:
            return self.outstanding == 0 or self.down

    def close(self):
        try:
            self.proc.popen.stdin.write(struct.pack(">i", ENGINE_END))
            self.proc.popen.stdin.flush()
        except OSError:
            pass
        try:
            self.proc.popen.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.proc.stop(5)


class Traffic:
    """Every host's engine walks the trace at a paced rate. In cycle c host h serves the requests i with
    (i + c) mod N == h, so a request's chain lands on another host each cycle and peers serve what it left behind."""

    def __init__(self, engines, chains, rate_per_host):
        self.engines = engines
        self.chains = chains
        self.interval = 1.0 / rate_per_host
        self.run_flag = threading.Event()
        self.stop_flag = threading.Event()
        self.threads = [threading.Thread(target=self._host, args=(e,), name="traffic-" + e.node, daemon=True)
                        for e in engines]
        self.position = {e.index: 0 for e in engines}

    def start(self):
        for t in self.threads:
            t.start()

    def _host(self, engine):
        n = len(self.engines)
        length = len(self.chains)
        cycle = 0
        while not self.stop_flag.is_set():
            for i in range(length):
                if (i + cycle) % n != engine.index:
                    continue
                while not self.run_flag.is_set():
                    if self.stop_flag.is_set():
                        return
                    self.run_flag.wait(0.1)
                started = time.monotonic()
                if not engine.dispatch(i, self.stop_flag):
                    return
                self.position[engine.index] += 1
                left = self.interval - (time.monotonic() - started)
                if left > 0:
                    time.sleep(left)
            cycle += 1

    def resume(self):
        self.run_flag.set()

    def pause(self, timeout_s=90):
        """Stop sending and wait until every engine answered what it was sent."""
        self.run_flag.clear()
        return wait_until(lambda: all(e.idle() or e.failed for e in self.engines), timeout_s, 0.05)

    def stop(self):
        self.run_flag.clear()
        self.stop_flag.set()
        for t in self.threads:
            t.join(5)


class Sampler:
    """Reads every Manager's CnC every SAMPLE_INTERVAL_S: (time, node, pid, counters) rows, kept for the checkers."""

    FIELDS = (REGISTRATION_STATE, VIEW_COMPLETE, FENCED_CAUSE, REMOTE_WORK, MEMBERS_IN_VIEW, INCOMPLETE_SHARDS,
              INCARNATION, EPOCH)

    def __init__(self, managers):
        self.managers = managers
        self.rows = []
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="sampler", daemon=True)

    def start(self):
        self.thread.start()

    def _loop(self):
        while not self.stop_flag.wait(SAMPLE_INTERVAL_S):
            now = time.monotonic()
            for m in self.managers:
                snap = m.snapshot(self.FIELDS)
                if snap is None:
                    continue
                row = (now, m.node, snap.pid, {f: snap.value(f, 0) for f in self.FIELDS})
                with self.lock:
                    self.rows.append(row)

    def since(self, t0):
        with self.lock:
            return [r for r in self.rows if r[0] >= t0]

    def stop(self):
        self.stop_flag.set()
        self.thread.join(2)
