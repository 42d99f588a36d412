"""The fault scenarios of scripts/qualify. Each injects one fault at a point of steady traffic and heals it; the
harness (qualify.py) times it, keeps traffic going around it and runs the checkers on every Manager afterwards.

A scenario names the nodes it expects to be fenced (`fenced`: they must be, during the fault) and whether every other
Manager must keep its registration (`others_keep_registration`: no fence, no expiry, while etcd is reachable for them
and the fault is shorter than the lease's validity).
"""

import time

import harness


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
    ]
