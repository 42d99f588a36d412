"""The fault scenarios of scripts/qualify. Each injects one fault at a point of steady traffic and heals it; the
harness (qualify.py) times it, keeps traffic going around it and runs the checkers on every Manager afterwards.

A scenario names the nodes it expects to be fenced (`fenced`: they must be, during the fault) and whether every other
Manager must keep its registration (`others_keep_registration`: no fence, no expiry, while etcd is reachable for them
and the fault is shorter than the lease's validity).
"""

import fcntl
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time

import harness
import rogue


class Scenario:
    id = None
    title = None
    smoke = False
    fault_s = 0.0
    fenced = ()
    # how long after the heal began an expected fence may show in the CnC: a frozen process shows it only on waking
    fence_shown_within_s_of_heal = 1.0
    others_keep_registration = True

    def inject(self, ctx):
        """Start the fault; returns a dict of figures."""
        return {}

    def heal(self, ctx):
        """End the fault; returns a dict of figures."""
        return {}

    def checks(self, figures):
        """Checks of this scenario's own (name, passed, detail), from its figures: that the fault took effect."""
        return []


class Baseline(Scenario):
    id = "baseline"
    title = "no fault (the reference of every other row)"
    smoke = True
    fault_s = 10.0


class IsolateManager(Scenario):
    """Every packet in and out of one host dropped (nft inside its namespace), for fault_s, then healed."""

    def __init__(self, ident, node, fault_s, expect_fence, smoke):
        self.id = ident
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.fenced = (node,) if expect_fence else ()
        self.title = "Manager %s isolated %.0f s (%s the membership TTL)" % (
            node, fault_s, "longer than" if expect_fence else "shorter than half")

    def inject(self, ctx):
        harness.net("isolate", ctx.run, self.node)
        return {}

    def heal(self, ctx):
        harness.net("heal", ctx.run, self.node)
        return {}


class OneWayCut(Scenario):
    """What `src` sends to `dst` is dropped; dst's packets still reach src (so TCP fails both ways, UDP one way)."""

    def __init__(self, src, dst, fault_s, smoke):
        self.id = "oneway-%s-%s" % (src, dst)
        self.src = src
        self.dst = dst
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "one-way cut %s -> %s for %.0f s" % (src, dst, fault_s)

    def inject(self, ctx):
        harness.net("drop-to", ctx.run, self.src, harness.node_addr(self.dst))
        return {}

    def heal(self, ctx):
        harness.net("heal", ctx.run, self.src)
        return {}


class CutFromEtcd(Scenario):
    """One host loses etcd (tcp 2379 both ways) but keeps its peers; past half the TTL its registration lapses."""

    def __init__(self, node, fault_s, smoke):
        self.id = "etcd-cut-%s" % node
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.fenced = (node,) if fault_s > ctx_ttl_half() else ()
        self.title = "Manager %s cut from etcd only for %.0f s" % (node, fault_s)

    def inject(self, ctx):
        harness.net("drop-port", ctx.run, self.node, "tcp", harness.ETCD_CLIENT_PORT)
        return {}

    def heal(self, ctx):
        harness.net("heal", ctx.run, self.node)
        return {}


class CutFromPeers(Scenario):
    """One host loses every other host (both directions) but keeps etcd: it stays registered, peers fail over."""

    def __init__(self, node, fault_s, smoke):
        self.id = "peers-cut-%s" % node
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "Manager %s cut from its peers only for %.0f s" % (node, fault_s)

    def inject(self, ctx):
        for other in ctx.managers:
            if other.node != self.node:
                harness.net("drop-to", ctx.run, self.node, other.addr)
                harness.net("drop-to", ctx.run, other.node, harness.node_addr(self.node))
        return {}

    def heal(self, ctx):
        for m in ctx.managers:
            harness.net("heal", ctx.run, m.node)
        return {}


class KillManager(Scenario):
    """kill -9 of a Manager under traffic; its engine recomputes meanwhile. It is started again on the same directory
    once etcd dropped its member record (the lease's TTL): a new process finding a live record of another runtime
    under its node id refuses to join."""

    def __init__(self, node, fault_s, smoke):
        self.id = "kill9-%s" % node
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "kill -9 Manager %s, started again once its record expired" % node

    def inject(self, ctx):
        m = ctx.manager(self.node)
        ctx.engine(self.node).set_manager_up(False)
        m.proc.kill9()
        m.keep_final()
        return {"killedPid": m.proc.pid}

    def heal(self, ctx):
        m = ctx.manager(self.node)
        t0 = time.monotonic()
        key = "/orbitkv/v1/%s/members/%s" % (ctx.cluster, self.node)
        gone = harness.wait_until(lambda: key not in ctx.etcd.prefix(key), ctx.ttl_s + 10, 0.2)
        record_gone_s = time.monotonic() - t0
        m.start()
        m.await_ready()
        ctx.engine(self.node).set_manager_up(True)
        return {"memberRecordGoneS": round(record_gone_s, 2), "memberRecordGone": bool(gone),
                "restartReadyS": round(time.monotonic() - t0 - record_gone_s, 2)}


class KillEtcdMember(Scenario):
    """kill -9 of one etcd member (a minority: a follower, or the leader), started again on its data after fault_s."""

    def __init__(self, leader, fault_s, smoke):
        self.leader = leader
        self.id = "etcd-kill-leader" if leader else "etcd-kill-follower"
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "kill -9 the etcd %s for %.0f s (a minority)" % ("leader" if leader else "follower", fault_s)
        self.member = None

    def inject(self, ctx):
        lead = ctx.etcd.leader()
        if self.leader:
            self.member = lead
        else:
            self.member = next(m for m in ctx.etcd.members if m != lead)
        if self.member is None:
            raise RuntimeError("no etcd leader to kill")
        ctx.etcd.procs[self.member].kill9()
        return {"member": self.member, "wasLeader": self.member == lead}

    def heal(self, ctx):
        t0 = time.monotonic()
        ctx.etcd.start(self.member)
        healthy = harness.wait_until(lambda: ctx.etcd.healthy(self.member), 30, 0.1)
        return {"etcdBackS": round(time.monotonic() - t0, 2), "etcdBack": bool(healthy)}


class PauseManager(Scenario):
    """SIGSTOP of a Manager for fault_s, then SIGCONT: past the TTL its lease expires and it must notice on waking."""

    def __init__(self, node, fault_s, smoke):
        self.id = "pause-%s-%ds" % (node, fault_s)
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.fenced = (node,) if fault_s > ctx_ttl_half() else ()
        self.fence_shown_within_s_of_heal = 5.0
        self.title = "SIGSTOP Manager %s for %.0f s" % (node, fault_s)

    def inject(self, ctx):
        import signal
        ctx.manager(self.node).proc.signal(signal.SIGSTOP)
        return {}

    def heal(self, ctx):
        import signal
        ctx.manager(self.node).proc.signal(signal.SIGCONT)
        return {}


class QuorumLost(Scenario):
    """kill -9 of two of the three etcd members (the leader first, then a follower), both started again on their data
    after fault_s: no keepalive can be acknowledged meanwhile, so past half the TTL every Manager's registration lapses
    locally, and each must be registered with a complete view again after the restore."""

    def __init__(self, nodes, fault_s, smoke=False):
        self.id = "etcd-quorum-lost"
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "kill -9 2 of 3 etcd members (quorum lost) for %.0f s" % fault_s
        self.killed = []
        self.fenced = tuple(nodes) if fault_s > ctx_ttl_half() else ()

    def inject(self, ctx):
        lead = ctx.etcd.leader()
        if lead is None:
            raise RuntimeError("no etcd leader to kill")
        self.killed = [lead, next(m for m in ctx.etcd.members if m != lead)]
        for member in self.killed:
            ctx.etcd.procs[member].kill9()
        return {"members": list(self.killed)}

    def heal(self, ctx):
        t0 = time.monotonic()
        for member in self.killed:
            ctx.etcd.start(member)
        healthy = harness.wait_until(lambda: all(ctx.etcd.healthy(m) for m in self.killed), 30, 0.1)
        return {"etcdBackS": round(time.monotonic() - t0, 2), "etcdBack": bool(healthy)}


class NonTransitive(Scenario):
    """a and b cannot reach each other (both directions dropped); both still reach c and etcd: nobody is fenced, each
    reaches the other's keys through c's copies or recomputes."""

    def __init__(self, x, y, fault_s, smoke=False):
        self.id = "partition-%s-%s" % (x, y)
        self.x = x
        self.y = y
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "non-transitive partition: %s <-> %s cut, both reach the rest, %.0f s" % (x, y, fault_s)

    def inject(self, ctx):
        harness.net("drop-to", ctx.run, self.x, harness.node_addr(self.y))
        harness.net("drop-to", ctx.run, self.y, harness.node_addr(self.x))
        return {}

    def heal(self, ctx):
        harness.net("heal", ctx.run, self.x)
        harness.net("heal", ctx.run, self.y)
        return {}


class SwizzleClog(Scenario):
    """Jepsen's swizzle-clog: every link (the Managers' hosts and the etcd hosts) stopped one by one, STEP_S apart,
    held for fault_s, then restored one by one in a random order drawn from the run's seed. Some Managers may lose
    their registration (their link stays down past half the TTL): allowed; what must hold are the other checkers."""

    STEP_S = 0.7

    def __init__(self, fault_s, smoke=False):
        self.id = "swizzle-clog"
        self.fault_s = fault_s
        self.smoke = smoke
        self.others_keep_registration = False
        self.title = "swizzle-clog: every link stopped %.1f s apart, held %.0f s, restored in a seeded random order" % (
            self.STEP_S, fault_s)
        self.order = []

    def inject(self, ctx):
        nodes = [m.node for m in ctx.managers] + list(ctx.etcd.members)
        rng = random.Random(ctx.args.seed)
        rng.shuffle(nodes)
        self.order = nodes
        for i, node in enumerate(nodes):
            if i:
                time.sleep(self.STEP_S)
            harness.net("isolate", ctx.run, node)
        return {"clogOrder": list(nodes)}

    def heal(self, ctx):
        rng = random.Random(ctx.args.seed + 1)
        order = list(self.order)
        rng.shuffle(order)
        for i, node in enumerate(order):
            if i:
                time.sleep(self.STEP_S)
            harness.net("heal", ctx.run, node)
        return {"unclogOrder": order}


class CatalogLoss(Scenario):
    """PERCENT of the catalog's datagrams (udp PEER_PORT, both ways: data and status/NAK frames) dropped at random on
    every host's link for fault_s: Aeron retransmits; nobody is fenced (etcd is untouched)."""

    def __init__(self, percent, fault_s, smoke=False):
        self.id = "loss-catalog-%d" % percent
        self.percent = percent
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "%d%% datagram loss on the catalog stream (udp %d, every host) for %.0f s" % (
            percent, harness.PEER_PORT, fault_s)

    def inject(self, ctx):
        for m in ctx.managers:
            harness.net("loss", ctx.run, m.node, "udp", harness.PEER_PORT, self.percent)
        return {}

    def heal(self, ctx):
        for m in ctx.managers:
            harness.net("heal", ctx.run, m.node)
        return {}


class BandwidthCap(Scenario):
    """A token bucket (tc tbf) on the switch's port of one host: what it receives (peer blocks it fetches, etcd,
    catalog) passes at RATE for fault_s. Nobody is fenced; its fetches slow down."""

    def __init__(self, node, rate, fault_s, smoke=False):
        self.id = "bandwidth-%s-%s" % (node, rate)
        self.node = node
        self.rate = rate
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "bandwidth cap %s on the link into %s for %.0f s" % (rate, node, fault_s)

    def inject(self, ctx):
        harness.net("cap", ctx.run, self.node, self.rate)
        return {}

    def heal(self, ctx):
        harness.net("uncap", ctx.run, self.node)
        return {}


class TransferLatency(Scenario):
    """Every transfer connection the host opens to a peer (tcp TRANSFER_PORT) goes through a userspace proxy in its own
    namespace that delays each chunk DELAY_MS each way (an nft nat redirect in the host's output hook; the proxy's own
    connections carry a mark the redirect skips). The host's established transfer connections are reset first (ss -K)
    so that they reconnect through the proxy: a reset and then latency. Nobody is fenced."""

    PROXY_PORT = 17471
    MARK = 0x77

    def __init__(self, node, delay_ms, fault_s, smoke=False):
        self.id = "latency-%s-%dms" % (node, delay_ms)
        self.node = node
        self.delay_ms = delay_ms
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "+%d ms each way on %s's transfer connections (TCP proxy), %.0f s" % (delay_ms, node, fault_s)
        self.proxy = None

    def ns(self, ctx):
        return "okq-%s-%s" % (ctx.run, self.node)

    def inject(self, ctx):
        argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "delayproxy.py"),
                str(self.PROXY_PORT), str(self.delay_ms), str(self.MARK)]
        self.proxy = harness.Proc("proxy", self.node, self.ns(ctx), argv,
                                  os.path.join(ctx.work, "proxy-%s.log" % self.node))
        ctx.extra_procs.append(self.proxy)
        if not harness.wait_until(lambda: "listening" in self.proxy.log_tail(), 10, 0.05):
            raise RuntimeError("latency proxy did not start: %s" % self.proxy.log_tail())
        rules = """table ip okqlat {
  chain out {
    type nat hook output priority -100; policy accept;
    meta mark != %d tcp dport %d ip daddr != %s redirect to :%d
  }
}
""" % (self.MARK, harness.TRANSFER_PORT, ctx.manager(self.node).addr, self.PROXY_PORT)
        subprocess.run(["ip", "netns", "exec", self.ns(ctx), "nft", "-f", "-"], input=rules.encode(), check=True)
        reset = subprocess.run(["ip", "netns", "exec", self.ns(ctx), "ss", "-K", "-t", "dport", "=",
                                ":%d" % harness.TRANSFER_PORT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        return {"connectionsReset": max(0, len(reset.stdout.splitlines()) - 1)}

    def heal(self, ctx):
        subprocess.run(["ip", "netns", "exec", self.ns(ctx), "nft", "delete", "table", "ip", "okqlat"],
                       stderr=subprocess.DEVNULL)
        # the proxy's connections end with it; the Manager reconnects directly
        if self.proxy is not None:
            self.proxy.killed_on_purpose = True
            self.proxy.stop(2)
        return {"proxiedConnections": self.proxy.log_tail(200).count("connection ") if self.proxy else 0}


def await_gauge(ctx, node, counter_ids, timeout_s, interval_s=0.002):
    """Poll a Manager's CnC for one of counter_ids above 0 (the first that is, with its value), or None."""
    m = ctx.manager(node)

    def positive():
        snap = m.snapshot(counter_ids)
        if snap is None:
            return None
        for cid in counter_ids:
            if snap.value(cid, 0) > 0:
                return (cid, snap.value(cid, 0))
        return None
    return harness.wait_until(positive, timeout_s, interval_s)


class KillMidTransfer(KillManager):
    """kill -9 of a Manager at the moment it serves a transfer as source (a source session open) or fetches one as
    requester (a fetch or peer read in flight), read from its CnC every 2 ms; started again like kill9-X."""

    ROLES = {"source": (harness.SOURCE_SESSIONS, harness.SOURCE_PINNED_BYTES),
             "requester": (harness.READS_IN_FLIGHT, harness.FETCHES_ACTIVE)}
    TRIGGER_WAIT_S = 15.0

    def __init__(self, role, node, fault_s, smoke=False):
        super().__init__(node, fault_s, smoke)
        self.role = role
        self.id = "kill9-%s-%s" % (role, node)
        self.title = "kill -9 Manager %s while it is a transfer's %s (CnC gauge trigger)" % (node, role)

    def inject(self, ctx):
        t0 = time.monotonic()
        hit = await_gauge(ctx, self.node, self.ROLES[self.role], self.TRIGGER_WAIT_S)
        figures = super().inject(ctx)
        figures["triggerWaitS"] = round(time.monotonic() - t0, 3)
        figures["trigger"] = None if hit is None else {"counter": hit[0], "value": hit[1]}
        if hit is None:
            raise RuntimeError("no %s transfer on %s within %.0f s: killed without one" % (
                self.role, self.node, self.TRIGGER_WAIT_S))
        return figures


class KillEngine(Scenario):
    """kill -9 of an engine process while it holds pins on its Manager (the pin gauge read every 2 ms); the Manager
    must notice the dead client and release its pins, leases and reads; the engine is started again once the Manager
    detached it (a new attach under the same name is refused until then)."""

    TRIGGER_WAIT_S = 15.0
    DETACH_WAIT_S = 30.0

    def __init__(self, node, fault_s, smoke=False):
        self.id = "kill9-engine-%s" % node
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "kill -9 the engine of %s while it holds pins, started again once detached" % node

    def inject(self, ctx):
        hit = await_gauge(ctx, self.node, (harness.PINS_ACTIVE,), self.TRIGGER_WAIT_S)
        engine = ctx.engine(self.node)
        engine.kill9()
        if hit is None:
            raise RuntimeError("engine %s held no pin within %.0f s" % (self.node, self.TRIGGER_WAIT_S))
        return {"pinsAtKill": hit[1]}

    def heal(self, ctx):
        m = ctx.manager(self.node)
        t0 = time.monotonic()

        def detached():
            snap = m.snapshot((harness.CLIENTS_ATTACHED, harness.PINS_ACTIVE))
            return snap is not None and snap.value(harness.CLIENTS_ATTACHED, 0) == 0
        gone = harness.wait_until(detached, self.DETACH_WAIT_S, 0.05)
        detached_s = time.monotonic() - t0
        ctx.engine(self.node).restart()
        return {"clientDetachedS": round(detached_s, 2), "clientDetached": bool(gone),
                "engineBackS": round(time.monotonic() - t0 - detached_s, 2)}


def cgroup_root(controller, ctx):
    """The cgroup v1 hierarchy of controller. `ip netns exec` gave the orchestrator a sysfs of its own without the
    cgroup mounts, so it mounts the hierarchy in its (private) mount namespace once: the same hierarchy as the root
    namespace's /sys/fs/cgroup/CONTROLLER, where scripts/qualify's clean-up finds the run's groups."""
    system = "/sys/fs/cgroup/%s" % controller
    if os.path.isdir(system):
        return system
    mine = os.path.join(ctx.work, "cgroup-" + controller)
    if not os.path.exists(os.path.join(mine, "cgroup.procs")):
        os.makedirs(mine, exist_ok=True)
        subprocess.run(["mount", "-t", "cgroup", "-o", controller, "okq-" + controller, mine], check=True)
    return mine


def cgroup_dir(controller, ctx, node):
    return os.path.join(cgroup_root(controller, ctx), "okq-%s-%s" % (ctx.run, node))


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def cgroup_enter(controller, ctx, node, pid, settings):
    path = cgroup_dir(controller, ctx, node)
    os.makedirs(path, exist_ok=True)
    for name, value in settings:
        write(os.path.join(path, name), value)
    write(os.path.join(path, "cgroup.procs"), pid)  # every thread of the process moves with it


def cgroup_leave(controller, ctx, node, pid):
    path = cgroup_dir(controller, ctx, node)
    try:
        write(os.path.join(cgroup_root(controller, ctx), "cgroup.procs"), pid)
    except OSError:
        pass  # the process is gone
    try:
        os.rmdir(path)
    except OSError:
        pass


class SlowHost(Scenario):
    """A cgroup v1 cpu quota of PERCENT of one core on a Manager process (every thread) for fault_s: a slow host. Its
    keepalives still go out (a fraction of a core is plenty for them): nobody is fenced."""

    def __init__(self, node, percent, fault_s, smoke=False):
        self.id = "slow-%s-%dpct" % (node, percent)
        self.node = node
        self.percent = percent
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "Manager %s limited to %d%% of a core (cgroup v1 cpu quota) for %.0f s" % (node, percent, fault_s)
        self.pid = None

    def inject(self, ctx):
        self.pid = ctx.manager(self.node).proc.pid
        period = 100000
        cgroup_enter("cpu", ctx, self.node, self.pid, [("cpu.cfs_period_us", period),
                                                         ("cpu.cfs_quota_us", period * self.percent // 100)])
        return {}

    def heal(self, ctx):
        path = cgroup_dir("cpu", ctx, self.node)
        throttled = {}
        try:
            with open(os.path.join(path, "cpu.stat")) as f:
                throttled = dict(line.split() for line in f)
        except OSError:
            pass
        cgroup_leave("cpu", ctx, self.node, self.pid)
        return {"throttledPeriods": int(throttled.get("nr_throttled", 0)),
                "throttledS": round(int(throttled.get("throttled_time", 0)) / 1e9, 2)}


class FreezeManager(Scenario):
    """A Manager process frozen through the cgroup v1 freezer for fault_s, then thawed (a pause its threads cannot
    see or handle, unlike SIGSTOP's job control): past half the TTL it must find itself fenced on waking."""

    def __init__(self, node, fault_s, smoke=False):
        self.id = "freeze-%s-%ds" % (node, fault_s)
        self.node = node
        self.fault_s = fault_s
        self.smoke = smoke
        self.fenced = (node,) if fault_s > ctx_ttl_half() else ()
        self.fence_shown_within_s_of_heal = 5.0
        self.title = "freeze Manager %s (cgroup v1 freezer) for %.0f s" % (node, fault_s)
        self.pid = None

    def inject(self, ctx):
        self.pid = ctx.manager(self.node).proc.pid
        cgroup_enter("freezer", ctx, self.node, self.pid, [])
        path = cgroup_dir("freezer", ctx, self.node)
        write(os.path.join(path, "freezer.state"), "FROZEN")
        frozen = harness.wait_until(lambda: open(os.path.join(path, "freezer.state")).read().strip() == "FROZEN", 5, 0.02)
        return {"frozen": bool(frozen)}

    def heal(self, ctx):
        path = cgroup_dir("freezer", ctx, self.node)
        write(os.path.join(path, "freezer.state"), "THAWED")
        harness.wait_until(lambda: open(os.path.join(path, "freezer.state")).read().strip() == "THAWED", 5, 0.02)
        cgroup_leave("freezer", ctx, self.node, self.pid)
        return {}


class RogueInput(Scenario):
    """A rogue process on a host of its own (the control namespace) sends bad input for fault_s: malformed and forged
    Aeron frames (setup, data with bad lengths and foreign sessions on the catalog's stream id, NAKs, status messages)
    and random datagrams at every host's catalog port, and garbage, oversized length words and idle half-open
    connections at every host's transfer port. Nothing may crash, leak or be fenced; the peers keep serving."""

    def __init__(self, fault_s, smoke=False):
        self.id = "rogue-input"
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "rogue process: forged/garbage datagrams at udp %d, garbage at tcp %d, %.0f s" % (
            harness.PEER_PORT, harness.TRANSFER_PORT, fault_s)
        self.rogue = None

    def inject(self, ctx):
        targets = [m.addr for m in ctx.managers]
        self.rogue = rogue.Rogue(targets, harness.PEER_PORT, harness.TRANSFER_PORT, ctx.args.seed)
        self.rogue.start()
        return {}

    def heal(self, ctx):
        self.rogue.stop()
        return {"rogue": self.rogue.sent}


class BadMemberRecords(Scenario):
    """Someone with write access to the cluster's prefix in etcd puts bad member records there for fault_s, one every
    PUT_INTERVAL_S, each under a node id of its own: bytes that are not JSON, JSON without the fields of a record,
    fields of the wrong types, and records over the 1 KiB limit. Every Manager's view must refuse each (counted: the
    watch invalidates the view, the snapshot that follows skips the record), keep its registration and keep serving;
    the heal deletes them."""

    PUT_INTERVAL_S = 0.5
    MEMBERS_COUNTED = {81: "invalidatedMalformed", 83: "invalidatedTooLarge", 85: "rejectedBySnapshots"}
    BAD_VALUES = (
        "\x00\x01 not json {",
        "{}",
        '{"nodeId": 7, "peerEndpoint": ["x"], "transferEndpoint": null, "epoch": "one"}',
        '{"nodeId": "rogue", "pad": "%s"}' % ("x" * 2048),
        "[" * 900,
    )

    def __init__(self, fault_s, smoke=False):
        self.id = "etcd-bad-member-records"
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "malformed and oversized member records put into etcd for %.0f s" % fault_s
        self.keys = []
        self.stop_puts = None
        self.thread = None
        self.before = {}

    def _counted(self, ctx):
        counted = {}
        for m in ctx.managers:
            snap = m.snapshot(tuple(self.MEMBERS_COUNTED))
            if snap is not None:
                for cid, name in self.MEMBERS_COUNTED.items():
                    counted[name] = counted.get(name, 0) + snap.value(cid, 0)
        return counted

    def _put_loop(self, ctx):
        i = 0
        while not self.stop_puts.is_set():
            value = self.BAD_VALUES[i % len(self.BAD_VALUES)]
            key = "/orbitkv/v1/%s/members/rogue-%d" % (ctx.cluster, i)
            try:
                ctx.etcd.call("/v3/kv/put", {"key": harness.b64(key), "value": harness.b64(value)})
                self.keys.append(key)
            except RuntimeError:
                pass
            i += 1
            self.stop_puts.wait(self.PUT_INTERVAL_S)

    def inject(self, ctx):
        self.before = self._counted(ctx)
        self.stop_puts = threading.Event()
        self.thread = threading.Thread(target=self._put_loop, args=(ctx,), daemon=True)
        self.thread.start()
        return {}

    def heal(self, ctx):
        self.stop_puts.set()
        self.thread.join(5)
        for key in self.keys:
            ctx.etcd.call("/v3/kv/deleterange", {"key": harness.b64(key)})
        after = self._counted(ctx)
        return {"badRecordsPut": len(self.keys),
                "badRecordRefusals": {k: after.get(k, 0) - self.before.get(k, 0) for k in self.MEMBERS_COUNTED.values()}}

    def checks(self, figures):
        refusals = figures.get("badRecordRefusals") or {}
        seen = sum(refusals.values())
        return [("bad-records-refused", figures.get("badRecordsPut", 0) > 0 and seen > 0,
                 "" if seen else "no Manager counted a bad record (%s put)" % figures.get("badRecordsPut"))]


FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


class ClockOffset(Scenario):
    """One Manager's wall clock OFFSET ahead of the others' for fault_s (libfaketime preloaded, as an NTP step would
    leave it; CLOCK_MONOTONIC is left alone, FAKETIME_DONT_FAKE_MONOTONIC): the Manager is stopped (SIGTERM) and
    started with the offset, and at the heal stopped and started without it. Its own restarts aside, nobody loses a
    registration; leases and validity run on the monotonic clock and etcd's, so the offset must change nothing."""

    def __init__(self, node, offset, fault_s, smoke=False):
        self.id = "clock-offset-%s" % node
        self.node = node
        self.offset = offset
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "Manager %s's wall clock %s (libfaketime) for %.0f s" % (node, offset, fault_s)

    def inject(self, ctx):
        if not os.path.exists(FAKETIME_LIB):
            raise RuntimeError("libfaketime not installed (%s; Debian faketime)" % FAKETIME_LIB)
        # NO_FAKE_STAT: file times stay true (a faked jar time makes the JVM refuse its start-up cache)
        env = {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": self.offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1",
               "NO_FAKE_STAT": "1"}
        took, whole = restart_manager(ctx, self.node, env)
        return {"offsetRestartS": took, "offsetWhole": whole, "offset": self.offset}

    def heal(self, ctx):
        took, whole = restart_manager(ctx, self.node)
        return {"restoreRestartS": took, "restoreWhole": whole}


def restart_manager(ctx, node, extra_env=None, extra_flags=()):
    """Stop a Manager (SIGTERM), wait until etcd dropped its member record, start it again with extra_env and
    extra_flags, wait until the cluster is whole; (seconds it took, whole)."""
    m = ctx.manager(node)
    engine = ctx.engine(node)
    engine.set_manager_up(False)
    t0 = time.monotonic()
    m.proc.killed_on_purpose = True  # stopped on purpose: its registration goes with it
    m.proc.stop()
    m.keep_final()
    key = "/orbitkv/v1/%s/members/%s" % (ctx.cluster, node)
    harness.wait_until(lambda: key not in ctx.etcd.prefix(key), ctx.ttl_s + 10, 0.2)
    m.start(extra_env, extra_flags)
    m.await_ready()
    engine.set_manager_up(True)
    whole = harness.wait_until(lambda: not whole_problems(ctx), ctx.ttl_s + 30, 0.2)
    return round(time.monotonic() - t0, 2), bool(whole)


def restart_engine(ctx, node, peers):
    """Stop a host's engine, wait until its Manager detached it, start it again with lookups that ask peers or not;
    the seconds it took."""
    t0 = time.monotonic()
    engine = ctx.engine(node)
    engine.stop_for_restart()
    m = ctx.manager(node)

    def detached():
        snap = m.snapshot((harness.CLIENTS_ATTACHED,))
        return snap is not None and snap.value(harness.CLIENTS_ATTACHED, 0) == 0
    harness.wait_until(detached, 30, 0.05)
    engine.restart(peers=peers)
    return round(time.monotonic() - t0, 2)


def whole_problems(ctx):
    import qualify
    return qualify.health_problems(ctx)


EXT4_IOC_SHUTDOWN = 0x8004587D  # _IOR('X', 125, __u32)
EXT4_GOING_FLAGS_NOLOGFLUSH = 2


class DiskFault(Scenario):
    """The SSD tier of one Manager on a small ext4 of its own (a loop device): the Manager is restarted with
    --ssd-dir there (an 8 MiB pool whose every DRAM victim is written to the SSD, BACKEND) and its engine restarted
    with lookups that do not ask peers (so that it recomputes, publishes, evicts and reads back), then the disk fails
    for fault_s: `full` fills the filesystem (the tier's file could not be preallocated on it, so its writes meet
    ENOSPC), `eio` shuts the filesystem down (EXT4_IOC_SHUTDOWN: every later call fails with EIO), `rot` flips bytes
    of blocks in the tier's file under the running Manager (bit rot: its checksums must catch every one), `slow`
    throttles the loop device for the Manager's cgroup (cgroup v1 blkio, THROTTLE_BPS each way). At the heal the
    Manager is restarted without the tier and the filesystem removed. The Manager must keep serving from DRAM and
    peers, count the failed or slow I/O, restore no wrong byte and crash not."""

    KINDS = {"full": "on a full filesystem (ENOSPC)", "eio": "on a shut-down filesystem (EIO)",
             "rot": "with bytes flipped in its file (bit rot)", "slow": "on a throttled disk (blkio)"}
    ROT_INTERVAL_S = 0.1
    ROT_FLIPS = 16  # bytes flipped per round, each in another data extent position
    THROTTLE_BPS = 256 * 1024
    FS_MIB = 24
    SSD_BYTES = "64m"
    POOL_BYTES = "8m"  # small: DRAM victims are written to the tier all the time (admission on-evict)

    def __init__(self, node, kind, backend, fault_s, smoke=False):
        self.id = "disk-%s-%s-%s" % (kind, backend.replace("_", ""), node)
        self.node = node
        self.kind = kind
        self.backend = backend
        self.fault_s = fault_s
        self.smoke = smoke
        self.title = "SSD tier of %s (%s backend) %s for %.0f s" % (node, backend, self.KINDS[kind], fault_s)
        self.loop = None
        self.stop_rot = None
        self.rot_thread = None
        self.flipped = 0
        self.pid = None

    def paths(self, ctx):
        base = os.path.join(ctx.work, "disk-%s" % self.node)
        return base + ".img", base + ".mnt"

    def root(self, argv, **kwargs):
        # in the orchestrator's own mount namespace: `ip netns exec` copies its caller's mounts into the namespace it
        # makes, so the Manager started next (from here) sees the filesystem; nothing outside the run does
        return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)

    def inject(self, ctx):
        image, mnt = self.paths(ctx)
        with open(image, "wb") as f:
            # full: smaller than the tier's file; otherwise room for all of it
            f.truncate((self.FS_MIB if self.kind == "full" else 96) << 20)
        self.loop = self.root(["losetup", "-f", "--show", image]).stdout.strip()
        self.root(["mkfs.ext4", "-q", "-F", self.loop])
        os.makedirs(mnt, exist_ok=True)
        self.root(["mount", self.loop, mnt])
        took, whole = restart_manager(ctx, self.node, None, [
            "--ssd-dir", mnt, "--ssd-bytes", self.SSD_BYTES, "--ssd-admission", "on-evict",
            "--pool-bytes", self.POOL_BYTES, "--ssd-backend", self.backend])
        figures = {"withTierRestartS": took, "withTierWhole": whole, "loop": self.loop}
        # its engine's lookups local only: what it misses it recomputes and publishes, and DRAM victims go to the tier
        figures["engineLocalS"] = restart_engine(ctx, self.node, False)
        # a little traffic on the healthy tier first, so that it holds blocks when the fault comes
        time.sleep(2.0)
        if self.kind == "full":
            free = os.statvfs(mnt)
            figures["filledBytes"] = free.f_bavail * free.f_frsize
            if figures["filledBytes"] > 0:  # the tier's own writes may have filled it already
                self.root(["fallocate", "-l", str(figures["filledBytes"]), os.path.join(mnt, "filler")])
        elif self.kind == "eio":
            fd = os.open(mnt, os.O_RDONLY)
            try:
                fcntl.ioctl(fd, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
            finally:
                os.close(fd)
        elif self.kind == "rot":
            files = [f for f in os.listdir(mnt) if f.endswith(".ssd")]
            if not files:
                raise RuntimeError("no tier file in %s" % mnt)
            self.stop_rot = threading.Event()
            self.rot_thread = threading.Thread(target=self._rot, args=(os.path.join(mnt, files[0]), ctx.args.seed),
                                               daemon=True)
            self.rot_thread.start()
        else:
            self.pid = ctx.manager(self.node).proc.pid
            dev = os.stat(self.loop).st_rdev
            spec = "%d:%d %d" % (os.major(dev), os.minor(dev), self.THROTTLE_BPS)
            cgroup_enter("blkio", ctx, self.node, self.pid, [("blkio.throttle.write_bps_device", spec),
                                                             ("blkio.throttle.read_bps_device", spec)])
        return figures

    def _rot(self, path, seed):
        """Flip ROT_FLIPS bytes every ROT_INTERVAL_S at random places of the file's data extents (SEEK_DATA)."""
        rng = random.Random(seed)
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            while not self.stop_rot.wait(self.ROT_INTERVAL_S):
                for _ in range(self.ROT_FLIPS):
                    try:
                        offset = os.lseek(fd, rng.randrange(size), os.SEEK_DATA)
                    except OSError:  # no data after that point
                        continue
                    byte = os.pread(fd, 1, offset)
                    if byte:
                        os.pwrite(fd, bytes([byte[0] ^ 0xFF]), offset)
                        self.flipped += 1
                os.fsync(fd)  # on the device: the Manager reads with O_DIRECT
        finally:
            os.close(fd)

    SSD_COUNTERS = {49: "reads", 51: "writes", 54: "ioErrors", 57: "admissions", 58: "admissionsSkipped",
                    200: "checksumMismatches", 205: "sourceReadFailures"}

    def checks(self, figures):
        ssd = figures.get("ssd") or {}
        if self.kind == "rot":
            hit = ssd.get("checksumMismatches", 0) + ssd.get("sourceReadFailures", 0)
            what = "no checksum mismatch although %s bytes were flipped" % figures.get("flippedBytes")
        elif self.kind == "slow":
            hit = figures.get("throttledGroupBytes", 0)
            what = "no I/O went through the throttled group"
        else:
            hit = ssd.get("ioErrors", 0) + ssd.get("admissionsSkipped", 0)
            what = "the tier counted no I/O error and skipped no admission"
        return [("disk-fault-seen", hit > 0, "" if hit else "%s: the fault did not reach it (%s)" % (what, ssd))]

    def heal(self, ctx):
        image, mnt = self.paths(ctx)
        if self.rot_thread is not None:
            self.stop_rot.set()
            self.rot_thread.join(5)
        snap = ctx.manager(self.node).snapshot(tuple(self.SSD_COUNTERS))
        figures = {"ssd": {name: snap.value(cid, 0) for cid, name in self.SSD_COUNTERS.items()} if snap else None}
        if self.kind == "rot":
            figures["flippedBytes"] = self.flipped
        if self.pid is not None:
            try:
                with open(os.path.join(cgroup_dir("blkio", ctx, self.node), "blkio.throttle.io_service_bytes")) as f:
                    total = [line.split() for line in f if line.startswith("Total")]
                figures["throttledGroupBytes"] = int(total[0][1]) if total else 0
            except (OSError, ValueError, IndexError):
                figures["throttledGroupBytes"] = 0
            cgroup_leave("blkio", ctx, self.node, self.pid)
        try:
            took, whole = restart_manager(ctx, self.node)
            figures.update({"withoutTierRestartS": took, "withoutTierWhole": whole})
            figures["enginePeersS"] = restart_engine(ctx, self.node, True)
        finally:
            subprocess.run(["umount", "-l", mnt], stderr=subprocess.DEVNULL)
            if self.loop:
                subprocess.run(["losetup", "-d", self.loop], stderr=subprocess.DEVNULL)
            try:
                os.unlink(image)
            except OSError:
                pass
        return figures


# The membership TTL the harness starts Managers with; half of it is the local validity after a keepalive.
TTL_S = 10


def ctx_ttl_half():
    return TTL_S / 2


def all_scenarios(hosts):
    """Every scenario for `hosts` hosts (a, b, c, ...), in the order they run; the smoke set is marked."""
    a, b = "a", "b" if hosts > 1 else "a"
    c = "c" if hosts > 2 else b
    return [
        IsolateManager("isolate-long-%s" % b, b, TTL_S + 4, True, True),
        KillManager(c, 2, True),
        KillEtcdMember(False, 12, True),
        OneWayCut(a, b, 10, True),
        IsolateManager("isolate-short-%s" % b, b, TTL_S / 2 - 2, False, False),
        CutFromEtcd(c, TTL_S + 2, False),
        CutFromPeers(a, 10, False),
        KillEtcdMember(True, 8, False),
        PauseManager(b, 2, False),
        PauseManager(c, TTL_S + 4, False),
        QuorumLost([chr(ord("a") + i) for i in range(hosts)], TTL_S + 2),
        NonTransitive(a, b, 10),
        SwizzleClog(3),
        CatalogLoss(1, 10),
        CatalogLoss(10, 10),
        CatalogLoss(30, 10),
        BandwidthCap(b, "10mbit", 10),
        TransferLatency(a, 50, 10),
        KillMidTransfer("source", b, 2),
        KillMidTransfer("requester", a, 2),
        KillEngine(c, 2),
        SlowHost(b, 5, 10),
        FreezeManager(c, TTL_S + 4),
        ClockOffset(c, "+90s", 10),
        BadMemberRecords(8),
        DiskFault(c, "full", "io_uring", 8),
        DiskFault(c, "full", "filechannel", 8),
        DiskFault(c, "eio", "io_uring", 8),
        DiskFault(c, "eio", "filechannel", 8),
        DiskFault(c, "rot", "io_uring", 8),
        DiskFault(c, "rot", "filechannel", 8),
        DiskFault(c, "slow", "io_uring", 8),
        # last: its forged Aeron images outlive it (bug 5 in docs/qualify.md) and fail the rows after it
        RogueInput(10),
    ]
