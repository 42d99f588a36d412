#!/usr/bin/env python3
"""The fault qualification of an OrbitKV cluster (scripts/qualify starts this inside the run's control namespace).

A 3-member etcd, one Manager per virtual host on the host's address, one ReplayEngine per host driving the trace with
block contents derived from the hash ids; a fault-free baseline, then each scenario: warm traffic, the fault, its
heal, traffic again, then traffic stops and the checkers run. One row per scenario on stdout; --json writes them all.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import authority
import harness
import scenarios
from harness import log

MEMBERSHIP_TTL_S = scenarios.TTL_S
SESSION_TTL_S = 5
WARM_S = 5.0  # traffic before the fault
AFTER_HEAL_S = 12.0  # traffic after the heal
RECOVERY_DEADLINE_S = MEMBERSHIP_TTL_S + 30.0  # heal until every Manager is registered with a complete view again
DRAIN_MARGIN_S = 10.0  # past heal + session TTL, until pins, sessions, budget and staging must be 0
HEALTHY_AT_START_S = 90.0
HIT_WINDOW_S = 2.0
HIT_RECOVERED = 0.95  # of the hit fraction before the fault
# --quick (the smoke set in scripts/test): shorter traffic around each fault, and faults that expect no fence capped
QUICK_WARM_S = 2.0
QUICK_AFTER_HEAL_S = 4.0
QUICK_BASELINE_S = 3.0
QUICK_FAULT_CAP_S = 5.0
QUICK_WARMUP_CYCLES = 1
WARMUP_CYCLES = 2
SERIES_BIN_S = 1.0  # the hit-over-time series (plots)
DEFAULT_SEED = 28
DEFAULT_REQUESTS = 300
DEFAULT_RATE = 15.0  # requests per second per host
BLOCK_BYTES = 16 * 1024
POOL_BYTES = "64m"


class Cluster:
    """Everything a scenario acts on: etcd, the Managers, their engines, the traffic, the sampler and the records."""

    def __init__(self, args):
        self.run = args.run
        self.hosts = args.hosts
        self.ttl_s = MEMBERSHIP_TTL_S
        self.cluster = "qualify-" + args.run
        self.work = args.work
        self.records = []
        self.records_lock = threading.Lock()
        self.chains = read_trace(args.trace, args.requests)
        self.max_chain = max(len(c) for c in self.chains)
        self.etcd = harness.Etcd(args.run, 3, self.work)
        self.managers = []
        self.engines = []
        self.traffic = None
        self.sampler = None
        self.extra_procs = []  # helpers a scenario starts in a host's namespace (a proxy)
        self.args = args
        self.warm_s = QUICK_WARM_S if args.quick else WARM_S
        self.after_heal_s = QUICK_AFTER_HEAL_S if args.quick else AFTER_HEAL_S
        self.baseline_hits = None  # {trace index: hit fraction} of the baseline, once it ran

    def manager(self, node):
        return next(m for m in self.managers if m.node == node)

    def engine(self, node):
        return next(e for e in self.engines if e.node == node)

    def processes(self):
        procs = list(self.etcd.all_procs)
        for m in self.managers:
            procs.extend(m.procs)
        for e in self.engines:
            procs.extend(e.procs)
        procs.extend(self.extra_procs)
        return procs

    def on_record(self, host, t, record):
        index, dram, ssd, peer, restore_ns, service_ns, wrong, unserved = record
        with self.records_lock:
            self.records.append((t, host, index, dram, ssd, peer, wrong, unserved, len(self.chains[index]),
                                 service_ns))

    def records_between(self, t0, t1):
        with self.records_lock:
            return [r for r in self.records if t0 <= r[0] < t1]

    def start(self):
        log("etcd: 3 members on %s" % self.etcd.endpoints())
        self.etcd.start_all()
        nodes = [chr(ord("a") + i) for i in range(self.hosts)]
        env = dict(os.environ, ORBITKV_SKIP_BUILD="1", ORBITKV_JAVA_OPTS="-Xmx512m")
        flags = ["--pool-bytes", POOL_BYTES, "--max-block-bytes", str(BLOCK_BYTES),
                 "--max-data-region-bytes", str(self.max_chain * BLOCK_BYTES), "--pool-pretouch", "off",
                 "--etcd-endpoints", self.etcd.endpoints(), "--cluster-name", self.cluster,
                 "--catalog-nodes", ",".join(nodes), "--membership-ttl-secs", str(MEMBERSHIP_TTL_S),
                 "--transfer-session-ttl", "%ds" % SESSION_TTL_S, "--peer-admission", "off"]
        shm = os.path.join("/dev/shm/orbitkv-qualify", self.run)
        for i, node in enumerate(nodes):  # started together, awaited in turn: JVM start-ups overlap
            m = harness.Manager(self.run, node, i, os.path.join(shm, node), self.work, flags, env)
            self.managers.append(m)
            m.start()
        for m in self.managers:
            m.await_ready()
            log("Manager %s ready (pid %d, %s)" % (m.node, m.proc.pid, m.addr))
        problems = wait_healthy(self, HEALTHY_AT_START_S)
        if problems:
            raise RuntimeError("cluster not healthy after start: %s" % "; ".join(problems))
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        jvm_flags = os.environ.get("QUALIFY_JVM_FLAGS", "").split()
        harness_dir = os.path.join(harness.ROOT, "bench-harness", "target")
        classpath = "%s/bench-harness-0.1.0-SNAPSHOT.jar:%s/lib/*" % (harness_dir, harness_dir)
        for m in self.managers:
            self.engines.append(harness.Engine(
                self.run, m.node, m.index, m.dir, self.work, java, jvm_flags, classpath, BLOCK_BYTES, self.max_chain,
                self.args.trace, self.args.requests, self.on_record))
        for e in self.engines:
            e.await_ready()
        log("engines attached; trace %s, %d requests, longest chain %d" % (
            self.args.trace, len(self.chains), self.max_chain))
        self.sampler = harness.Sampler(self.managers)
        self.sampler.start()
        self.traffic = harness.Traffic(self.engines, self.chains, self.args.rate)
        self.traffic.start()

    def close(self):
        if self.traffic:
            self.traffic.stop()
        if self.sampler:
            self.sampler.stop()
        for e in self.engines:
            e.close()
        for m in self.managers:
            if m.proc:
                m.proc.signal(signal.SIGCONT)  # a paused Manager must be able to stop
                m.proc.signal(signal.SIGTERM)
        for m in self.managers:
            if m.proc:
                m.proc.stop()
        for p in self.extra_procs:
            p.stop(2)
        for p in self.etcd.procs.values():
            p.stop(5)
        for member in self.etcd.members:
            # etcd's data (64 MiB preallocated WAL per member) goes; the logs stay
            shutil.rmtree(os.path.join(self.work, "etcd-" + member), ignore_errors=True)


def read_trace(path, limit):
    """The hash-id chains of the first `limit` requests, as ReplayTrace reads them (blank lines skipped)."""
    chains = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            chains.append(json.loads(line)["hash_ids"])
            if limit and len(chains) >= limit:
                break
    return chains


def health_problems(ctx):
    """What keeps the cluster from being whole: every Manager registered, remote work on, a complete view of all
    members, no hosted shard of incomplete coverage. Empty when whole."""
    problems = []
    for m in ctx.managers:
        snap = m.snapshot()
        if snap is None:
            problems.append("%s: no CnC of its process" % m.node)
            continue
        v = snap.value
        if v(harness.REGISTRATION_STATE) != harness.REGISTERED:
            problems.append("%s: registration state %s" % (m.node, v(harness.REGISTRATION_STATE)))
        if v(harness.REMOTE_WORK) != 1 or v(harness.VIEW_COMPLETE) != 1:
            problems.append("%s: remote work %s, view complete %s" % (m.node, v(harness.REMOTE_WORK),
                                                                       v(harness.VIEW_COMPLETE)))
        if v(harness.MEMBERS_IN_VIEW) != len(ctx.managers):
            problems.append("%s: %s members in view" % (m.node, v(harness.MEMBERS_IN_VIEW)))
        if v(harness.INCOMPLETE_SHARDS) != 0:
            problems.append("%s: %s shards of incomplete coverage" % (m.node, v(harness.INCOMPLETE_SHARDS)))
    return problems


def wait_healthy(ctx, timeout_s):
    """Poll until the cluster is whole; the remaining problems at the deadline (empty: whole)."""
    deadline = time.monotonic() + timeout_s
    while True:
        problems = health_problems(ctx)
        if not problems or time.monotonic() >= deadline:
            return problems
        time.sleep(0.2)


def drain_values(ctx):
    """{node: {what: value}} of every drained gauge that is not 0."""
    left = {}
    for m in ctx.managers:
        snap = m.snapshot()
        if snap is None:
            left[m.node] = {"cnc": "not readable"}
            continue
        nonzero = {name: snap.value(cid, 0) for cid, name in harness.DRAINED.items() if snap.value(cid, 0)}
        if nonzero:
            left[m.node] = nonzero
    return left


def error_entries(ctx):
    """{(node, pid, first line): observations} of every Manager process's distinct error log, the ended ones included."""
    entries = {}
    for m in ctx.managers:
        snaps = list(m.final_snapshots)
        current = m.snapshot()
        if current is not None:
            snaps.append(current)
        for snap in snaps:
            for count, _first, _last, text in snap.errors:
                key = (m.node, snap.pid, text.splitlines()[0] if text else "")
                entries[key] = max(entries.get(key, 0), count)
                ERROR_TEXTS.setdefault(key, text)
    return entries


ERROR_TEXTS = {}  # (node, pid, first line): the entry's whole text (its stack trace), for the report


# Error-log entries that are no internal error: a refusal of what a client asked, logged as the Manager logs every
# rejected request. Each with the situation that makes it.
EXPECTED_ERRORS = {
    # the engine of a frozen Manager timed out, closed its client and attached again under the same name before the
    # Manager, once awake, had detached the old client (its liveness timeout): refused until then
    "RequestRejectedException: NAME_IN_USE": "engine re-attached under its name while its old attachment lived",
}


# Error-log entries of a bug already found by the suite (docs/qualify.md, "Bugs found by the suite"): still a failure,
# the row names the bug.
KNOWN_FINDINGS = {
    "peer read timeout": "bug 3 (peer read errors logged per key)",
    "peer read failed": "bug 3 (peer read errors logged per key)",
    "io.aeron.exceptions.ConfigurationException": "bug 4 (forged Aeron setup frames in the error log)",
    "invalid term buffer length": "bug 4 (forged Aeron setup frames in the error log)",
    "IndexOutOfBoundsException: Range [": "bug 5 (forged Aeron data frame past the term's end)",
}


# Counters whose movement a scenario reports (refusals, rejections, timeouts, failures), by words of their labels.
REPORTED_COUNTER_WORDS = ("refused", "rejected", "timed out", "failures", "expired", "given up", "re-registrations",
                          "retired", "recompute", "Errors", "mismatch")


def counter_values(ctx):
    """{node: (pid, {label: value})} of every Manager's current process (full read)."""
    values = {}
    for m in ctx.managers:
        snap = m.snapshot()
        if snap is not None:
            values[m.node] = (snap.pid, {snap.labels[c]: v for c, v in snap.counters.items()})
    return values


def gauge_labels():
    """Labels of the Manager's gauges (the golden counter layout marks them): a gauge's movement is no count."""
    path = os.path.join(harness.ROOT, "manager", "src", "test", "resources", "io", "orbitkv", "manager",
                        "counter-layout.txt")
    labels = set()
    with open(path) as f:
        for line in f:
            parts = line.split(None, 3)
            if len(parts) == 4 and parts[2] == "gauge":
                labels.add(parts[3].strip())
            elif len(parts) == 4 and parts[0] == "-" and parts[2] == "gauge":
                labels.add(parts[3].strip())
    return labels


GAUGES = gauge_labels()


def counter_moves(ctx, before, after):
    """{label: movement summed over the Managers} of the reported counters; a process that ended in between counts
    from its value at the start to its last value, its successor from 0."""
    moves = {}
    for m in ctx.managers:
        start_pid, start = before.get(m.node, (None, {}))
        spans = []
        for snap in m.final_snapshots:
            if snap.pid == start_pid:
                spans.append((start, {snap.labels[c]: v for c, v in snap.counters.items()}))
        end_pid, end = after.get(m.node, (None, {}))
        spans.append((start if end_pid == start_pid else {}, end))
        for first, last in spans:
            for label, value in last.items():
                if label not in GAUGES and any(w in label for w in REPORTED_COUNTER_WORDS):
                    delta = value - first.get(label, 0)
                    if delta:
                        moves[label] = moves.get(label, 0) + delta
    return dict(sorted(moves.items()))


def etcd_epochs(ctx):
    try:
        keys = ctx.etcd.prefix("/orbitkv/v1/%s/epochs/" % ctx.cluster)
        return {k.rsplit("/", 1)[1]: int(v) for k, v in keys.items()}
    except (RuntimeError, ValueError) as ex:
        return {"error": str(ex)}


def first_whole(samples, t_from, hosts):
    """The time of the first sampler round at or after t_from in which every Manager was whole (registered, remote
    work on, a complete view of every member, no hosted shard of incomplete coverage), or None."""
    rounds = {}
    for t, node, _pid, v in samples:
        if t >= t_from:
            rounds.setdefault(t, {})[node] = v
    for t in sorted(rounds):
        r = rounds[t]
        if len(r) == hosts and all(
                v[harness.REGISTRATION_STATE] == harness.REGISTERED and v[harness.REMOTE_WORK] == 1
                and v[harness.VIEW_COMPLETE] == 1 and v[harness.MEMBERS_IN_VIEW] == hosts
                and v[harness.INCOMPLETE_SHARDS] == 0 for v in r.values()):
            return t
    return None


def hit_fraction(records):
    blocks = sum(r[8] for r in records)
    return sum(r[3] + r[4] + r[5] for r in records) / blocks if blocks else None


def peer_fraction(records):
    blocks = sum(r[8] for r in records)
    return sum(r[5] for r in records) / blocks if blocks else None


def rounded(x, digits=3):
    return None if x is None else round(x, digits)


def run_scenario(ctx, sc):
    """Run one scenario; returns its JSON object (id, title, passed, checks, figures)."""
    checks = []
    figures = {}

    def check(name, ok, detail=""):
        checks.append({"name": name, "passed": bool(ok), "detail": detail})

    log("scenario %s: %s" % (sc.id, sc.title))
    problems = wait_healthy(ctx, HEALTHY_AT_START_S)
    check("whole-at-start", not problems, "; ".join(problems))
    if problems:
        return {"id": sc.id, "title": sc.title, "passed": False, "checks": checks, "figures": figures}
    errors_before = error_entries(ctx)
    counters_before = counter_values(ctx)
    epochs_before = etcd_epochs(ctx)
    incarnations_before = {m.node: (m.proc.pid, m.snapshot().value(harness.INCARNATION)) for m in ctx.managers}
    killed_before = {id(p) for p in ctx.processes() if p.killed_on_purpose}
    t_start = time.monotonic()
    ctx.traffic.resume()
    time.sleep(ctx.warm_s)
    t_fault = time.monotonic()
    try:
        figures.update(sc.inject(ctx))
        time.sleep(sc.fault_s)
    finally:
        t_heal_start = time.monotonic()
        figures.update(sc.heal(ctx))
    t_heal = time.monotonic()
    time.sleep(ctx.after_heal_s)
    t_stop = time.monotonic()
    drained_traffic = ctx.traffic.pause()
    t_quiet = time.monotonic()
    check("traffic-answered", drained_traffic, "" if drained_traffic else "engines still had requests outstanding")

    # the cluster whole again
    problems = wait_healthy(ctx, max(1.0, t_heal + RECOVERY_DEADLINE_S - time.monotonic()))
    # the sampler's first round that saw it whole (it may trail the poll above by a round)
    whole_at = harness.wait_until(lambda: first_whole(ctx.sampler.since(t_heal), t_heal, len(ctx.managers)),
                                  0.0 if problems else 3 * harness.SAMPLE_INTERVAL_S + 1.0, 0.05)
    figures["wholeAfterHealS"] = None if whole_at is None else round(whole_at - t_heal, 2)
    check("whole-after-heal", not problems and whole_at is not None and whole_at <= t_heal + RECOVERY_DEADLINE_S,
          "; ".join(problems) or ("" if whole_at is not None else "no sampler round saw every Manager whole"))

    # pins, sessions, budget and staging back to 0
    deadline = max(t_heal, t_quiet) + SESSION_TTL_S + DRAIN_MARGIN_S
    left = harness.wait_until(lambda: not drain_values(ctx), max(0.5, deadline - time.monotonic()), 0.2)
    left_values = drain_values(ctx)
    figures["drainedAfterQuietS"] = None if left_values else round(time.monotonic() - t_quiet, 2)
    check("drained", not left_values, json.dumps(left_values) if left_values else "")
    del left

    # 0 wrong bytes
    records = ctx.records_between(t_start, time.monotonic())
    wrong = sum(r[6] for r in records)
    check("wrong-bytes", wrong == 0, "%d wrong bytes" % wrong if wrong else "")

    # membership epochs only increase: per node in the CnC samples (strictly at every new incarnation) and in etcd
    samples = ctx.sampler.since(t_start)
    epoch_problems = []
    last = {}
    for t, node, pid, values in samples:
        epoch, incarnation = values[harness.EPOCH], values[harness.INCARNATION]
        if epoch <= 0:
            continue
        if node in last:
            p_pid, p_inc, p_epoch = last[node]
            if epoch < p_epoch or ((pid, incarnation) != (p_pid, p_inc) and epoch <= p_epoch):
                epoch_problems.append("%s: epoch %d (pid %d, incarnation %d) after %d (pid %d, incarnation %d)" % (
                    node, epoch, pid, incarnation, p_epoch, p_pid, p_inc))
        last[node] = (pid, incarnation, epoch)
    epochs_after = etcd_epochs(ctx)
    for node, before in epochs_before.items():
        if node != "error" and epochs_after.get(node, -1) < before:
            epoch_problems.append("etcd epochs/%s: %s after %s" % (node, epochs_after.get(node), before))
    check("epochs-increase", not epoch_problems and "error" not in epochs_after,
          "; ".join(epoch_problems) + epochs_after.get("error", ""))
    figures["epochs"] = {"before": epochs_before, "after": epochs_after}

    # no new entry in any Manager's error log
    errors_after = error_entries(ctx)
    new_errors = ["%s (pid %d, x%d): %s" % (k[0], k[1], n - errors_before.get(k, 0), k[2])
                  for k, n in errors_after.items() if n > errors_before.get(k, 0)]
    expected = [e for e in new_errors if any(pattern in e for pattern in EXPECTED_ERRORS)]
    internal = [e for e in new_errors if e not in expected]
    known = sorted({f for e in internal for pattern, f in KNOWN_FINDINGS.items() if pattern in e})
    check("error-logs", not internal, ("[%s] " % ", ".join(known) if known else "") + "; ".join(internal[:5]))
    figures["knownFindings"] = known
    figures["newErrors"] = len(internal)
    texts = {}  # one whole text (stack trace) per exception class of the new internal entries
    for k, n in errors_after.items():
        if n > errors_before.get(k, 0) and not any(p in k[2] for p in EXPECTED_ERRORS):
            texts.setdefault(k[2].split(":")[0], ERROR_TEXTS.get(k, "")[:1500])
    figures["newErrorTexts"] = list(texts.values())[:8]
    figures["expectedErrorEntries"] = expected[:10]

    # no stale authority: the Managers' authority logs, ordered by the host's one CLOCK_MONOTONIC (time.monotonic's)
    verdict = authority.check_dirs([m.dir for m in ctx.managers], int(t_start * 1e9))
    check("no-stale-authority", not verdict["violations"], "; ".join(verdict["violations"][:5]))
    figures["authority"] = verdict["figures"]
    figures["fenceFromAuthorityLogS"] = {n: round(t / 1e9 - t_fault, 2) for n, t in verdict["firstFenceNs"].items()}

    # no process died that the scenario did not kill
    died = [p.describe() for p in ctx.processes() if not p.alive() and not p.killed_on_purpose
            and not getattr(p, "reported", False)]
    for p in ctx.processes():
        if not p.alive():
            p.reported = True
    engine_failures = [e.failed for e in ctx.engines if e.failed]
    check("no-unexpected-death", not died and not engine_failures, "; ".join(died + engine_failures)[:2000])

    for name, ok, detail in sc.checks(figures):
        check(name, ok, detail)
    listening = listening_problems(ctx)
    check("listening", not listening, "; ".join(listening))

    # expected fences, and nobody else losing its registration
    fault_samples = [s for s in samples if t_fault <= s[0] <= t_heal + RECOVERY_DEADLINE_S]
    lost = {}
    incarnations_seen = {}
    for t, node, pid, values in fault_samples:
        incarnations_seen.setdefault(node, set()).add((pid, values[harness.INCARNATION]))
        # a fence and the next registration can both fall between two samples: a new incarnation shows it
        if (values[harness.FENCED_CAUSE] or values[harness.REGISTRATION_STATE] != harness.REGISTERED
                or (pid, values[harness.INCARNATION]) != incarnations_before[node]):
            lost.setdefault(node, (t, values[harness.FENCED_CAUSE], values[harness.REGISTRATION_STATE]))
    figures["incarnationsSeen"] = {n: len(v) for n, v in sorted(incarnations_seen.items())}
    for node in sc.fenced:
        ok = node in lost and lost[node][0] <= t_heal_start + sc.fence_shown_within_s_of_heal
        figures["timeToFenceS"] = rounded(lost[node][0] - t_fault, 2) if node in lost else None
        figures["fenceCause"] = lost[node][1] if node in lost else None
        check("fenced-%s" % node, ok, "" if ok else "%s kept its registration through the fault" % node)
    others = {n: v for n, v in lost.items() if n not in sc.fenced
              and n not in [p.node for p in ctx.processes() if p.kind == "manager" and p.killed_on_purpose
                            and id(p) not in killed_before]}
    if sc.others_keep_registration:
        check("others-registered", not others,
              "; ".join("%s lost its registration %.1f s into the fault (cause %d, state %d)" % (n, v[0] - t_fault, v[1], v[2])
                        for n, v in others.items()))
    incarnations_after = {m.node: (m.proc.pid, m.snapshot().value(harness.INCARNATION) if m.snapshot() else None)
                          for m in ctx.managers}
    figures["newIncarnations"] = sorted(n for n in incarnations_after if incarnations_after[n] != incarnations_before[n])

    # traffic figures
    before = ctx.records_between(t_start, t_fault)
    during = ctx.records_between(t_fault, t_heal)
    after = ctx.records_between(t_heal, t_stop)
    hit_before = hit_fraction(before)
    figures.update({
        "requests": len(records), "unserved": sum(1 for r in records if r[7]), "wrongBytes": wrong,
        "hitBefore": rounded(hit_before), "hitDuring": rounded(hit_fraction(during)),
        "hitAfter": rounded(hit_fraction(after)), "peerBefore": rounded(peer_fraction(before)),
        "peerDuring": rounded(peer_fraction(during)), "peerAfter": rounded(peer_fraction(after)),
        "faultS": round(t_heal_start - t_fault, 2), "healS": round(t_heal - t_heal_start, 2),
        "hitDuringByHost": {m.node: rounded(hit_fraction([r for r in during if r[1] == m.index]))
                            for m in ctx.managers},
    })
    recovery = None
    if hit_before:
        t = t_heal
        while t + HIT_WINDOW_S <= t_stop:
            h = hit_fraction(ctx.records_between(t, t + HIT_WINDOW_S))
            if h is not None and h >= HIT_RECOVERED * hit_before:
                recovery = round(t + HIT_WINDOW_S - t_heal, 2)
                break
            t += 0.5
    figures["hitRecoveredS"] = recovery
    figures["serviceMsBefore"] = service_ms(before)
    figures["serviceMsDuring"] = service_ms(during)
    figures["counterMoves"] = counter_moves(ctx, counters_before, counter_values(ctx))
    figures.update(coverage_figures(samples, t_fault, t_stop))
    figures.update(recompute_figures(records))
    figures["refusals"] = {k: v for k, v in figures["counterMoves"].items() if "refused" in k or "rejected" in k}
    if sc.id == "baseline":
        ctx.baseline_hits = hits_by_index(records)
    figures.update(baseline_figures(ctx, t_fault, t_heal, t_stop))
    series = hit_series(ctx, t_start, t_stop, t_fault, t_heal_start, t_heal)
    passed = all(c["passed"] for c in checks)
    return {"id": sc.id, "title": sc.title, "passed": passed, "checks": checks, "figures": figures,
            "series": series}


def listening_problems(ctx):
    """What listens in a host's namespace beyond its Manager's configured endpoints (tcp ADDR:TRANSFER_PORT, udp
    ADDR:PEER_PORT): `ss -ltnup` there. The engine and every helper must listen on nothing."""
    problems = []
    for m in ctx.managers:
        allowed = {("tcp", "%s:%d" % (m.addr, harness.TRANSFER_PORT)), ("udp", "%s:%d" % (m.addr, harness.PEER_PORT))}
        out = subprocess.run(["ip", "netns", "exec", "okq-%s-%s" % (ctx.run, m.node), "ss", "-ltnupH"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if out.returncode != 0:
            problems.append("%s: ss failed: %s" % (m.node, out.stderr.strip()))
            continue
        for line in out.stdout.splitlines():
            parts = line.split()
            if len(parts) < 5:
                continue
            local = parts[4].replace("[::ffff:", "").replace("]", "")
            if (parts[0], local) not in allowed:
                problems.append("%s: %s %s listening (%s)" % (m.node, parts[0], parts[4], " ".join(parts[6:])[:120]))
    return problems


def service_ms(records):
    """p50 and p99 of the engines' service time (lookup to the end of the request) in ms, or None."""
    times = sorted(r[9] for r in records if not r[7])
    if not times:
        return None
    return [round(times[len(times) // 2] / 1e6, 1), round(times[min(len(times) - 1, len(times) * 99 // 100)] / 1e6, 1)]


def coverage_figures(samples, t_from, t_to):
    """Seconds (sampler rounds x interval) in which a Manager hosted a shard of incomplete coverage or had an
    incomplete view, between the fault and the end of traffic: the largest over the Managers and per Manager."""
    incomplete = {}
    view = {}
    for t, node, _pid, v in samples:
        if t_from <= t <= t_to:
            incomplete.setdefault(node, 0)
            view.setdefault(node, 0)
            if v[harness.INCOMPLETE_SHARDS] > 0:
                incomplete[node] += 1
            if v[harness.VIEW_COMPLETE] != 1:
                view[node] += 1
    step = harness.SAMPLE_INTERVAL_S
    return {"incompleteCoverageS": round(max(incomplete.values(), default=0) * step, 1),
            "incompleteCoverageByHostS": {n: round(c * step, 1) for n, c in sorted(incomplete.items())},
            "viewIncompleteS": round(max(view.values(), default=0) * step, 1)}


def recompute_figures(records):
    """Requests the engines recomputed in part or whole: unserved (the Manager gone or not answering: all of it) and
    partial (blocks the cluster no longer had, or could not fetch in time), with the blocks recomputed."""
    partial = [r for r in records if not r[7] and r[3] + r[4] + r[5] < r[8]]
    return {"recomputedRequests": {"unserved": sum(1 for r in records if r[7]), "partial": len(partial)},
            "recomputedBlocks": sum(r[8] - (r[3] + r[4] + r[5]) for r in records)}


def hits_by_index(records):
    hits = {}
    for r in records:
        if r[8]:
            h, n = hits.get(r[2], (0, 0))
            hits[r[2]] = (h + r[3] + r[4] + r[5], n + r[8])
    return {i: h / n for i, (h, n) in hits.items()}


def expected_hit(ctx, records):
    """The baseline's hit fraction over the same trace positions as records (blocks weighted), or None."""
    if not ctx.baseline_hits:
        return None
    known = [r for r in records if r[2] in ctx.baseline_hits and r[8]]
    blocks = sum(r[8] for r in known)
    return sum(ctx.baseline_hits[r[2]] * r[8] for r in known) / blocks if blocks else None


def baseline_figures(ctx, t_fault, t_heal, t_stop):
    """Against the baseline at the same trace positions: the time from heal until a window's hit fraction is back
    within HIT_RECOVERED of it, and the fraction of blocks lost from the fault to the end of traffic."""
    if not ctx.baseline_hits:
        return {}
    recovered = None
    t = t_heal
    while t + HIT_WINDOW_S <= t_stop:
        window = ctx.records_between(t, t + HIT_WINDOW_S)
        h, e = hit_fraction(window), expected_hit(ctx, window)
        if h is not None and e is not None and h >= HIT_RECOVERED * e:
            recovered = round(t + HIT_WINDOW_S - t_heal, 2)
            break
        t += 0.5
    span = ctx.records_between(t_fault, t_stop)
    blocks = sum(r[8] for r in span)
    lost = None
    if blocks:
        e = expected_hit(ctx, span)
        h = hit_fraction(span)
        lost = None if e is None else round(max(0.0, e - h), 3)
    return {"hitRecoveredVsBaselineS": recovered, "hitLost": lost}


def hit_series(ctx, t_start, t_stop, t_fault, t_heal_start, t_heal):
    """The hit fraction per SERIES_BIN_S from the start of traffic to its end, with the baseline's at the same trace
    positions and the requests and unserved ones per bin; times relative to the fault's start."""
    bins = []
    t = t_start
    while t < t_stop:
        recs = ctx.records_between(t, t + SERIES_BIN_S)
        bins.append([round(t - t_fault, 2), rounded(hit_fraction(recs)), rounded(expected_hit(ctx, recs)), len(recs),
                     sum(1 for r in recs if r[7])])
        t += SERIES_BIN_S
    return {"binS": SERIES_BIN_S, "columns": ["t", "hit", "baselineHit", "requests", "unserved"], "bins": bins,
            "fault": [0.0, round(t_heal_start - t_fault, 2)], "healed": round(t_heal - t_fault, 2),
            "end": round(t_stop - t_fault, 2)}


def row(result):
    f = result["figures"]

    def fmt(x):
        return "-" if x is None else str(x)
    failed = [c["name"] for c in result["checks"] if not c["passed"]]
    return "%-22s %-4s req %-5s unserved %-4s wrong %-3s hit %s/%s/%s peer %s/%s/%s fence %-5s whole %-5s drain %-5s %s" % (
        result["id"], "PASS" if result["passed"] else "FAIL", fmt(f.get("requests")), fmt(f.get("unserved")),
        fmt(f.get("wrongBytes")), fmt(f.get("hitBefore")), fmt(f.get("hitDuring")), fmt(f.get("hitAfter")),
        fmt(f.get("peerBefore")), fmt(f.get("peerDuring")), fmt(f.get("peerAfter")), fmt(f.get("timeToFenceS")),
        fmt(f.get("wholeAfterHealS")), fmt(f.get("drainedAfterQuietS")),
        ("failed: " + ",".join(failed)) if failed else "")


def main():
    p = argparse.ArgumentParser(prog="scripts/qualify", description=__doc__)
    p.add_argument("--run", required=True, help="the run id scripts/qualify made its namespaces with")
    p.add_argument("--hosts", type=int, default=3)
    p.add_argument("--smoke", action="store_true", help="only the smoke scenarios")
    p.add_argument("--scenarios", help="comma-separated scenario ids (see --list)")
    p.add_argument("--list", action="store_true", help="print the scenarios and exit")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--trace", default=os.path.join(harness.ROOT, "benches", "workloads", "conversation_trace.jsonl"))
    p.add_argument("--requests", type=int, default=DEFAULT_REQUESTS, help="requests of the trace replayed in cycles")
    p.add_argument("--rate", type=float, default=DEFAULT_RATE, help="requests per second per host")
    p.add_argument("--work", help="logs and etcd data (default ${TMPDIR:-/tmp}/orbitkv-qualify-RUN)")
    p.add_argument("--quick", action="store_true",
                   help="shorter traffic around each fault and faults without an expected fence capped at %.0f s "
                        "(the smoke set in scripts/test)" % QUICK_FAULT_CAP_S)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the random choices (swizzle order, rogue)")
    p.add_argument("--plots", help="write a hit-over-time SVG per scenario (fault shaded) and an index here")
    args = p.parse_args()
    every = scenarios.all_scenarios(args.hosts)
    if args.list:
        for sc in every:
            print("%-22s %-6s %s" % (sc.id, "smoke" if sc.smoke else "", sc.title))
        return 0
    chosen = [sc for sc in every if sc.smoke] if args.smoke else every
    if args.scenarios:
        wanted = args.scenarios.split(",")
        unknown = [w for w in wanted if w not in {sc.id for sc in every}]
        if unknown:
            log("unknown scenario(s) %s; --list shows them" % ",".join(unknown))
            return 2
        chosen = [sc for sc in every if sc.id in wanted]
    if args.quick:
        for sc in chosen:
            if not sc.fenced and sc.fault_s > QUICK_FAULT_CAP_S:
                sc.title = sc.title.replace("%.0f s" % sc.fault_s, "%.0f s" % QUICK_FAULT_CAP_S)
                sc.fault_s = QUICK_FAULT_CAP_S
    args.work = args.work or os.path.join(os.environ.get("TMPDIR", "/tmp"), "orbitkv-qualify-" + args.run)
    os.makedirs(args.work, exist_ok=True)
    log("run %s: %d hosts, scenarios %s; logs in %s" % (args.run, args.hosts, ",".join(s.id for s in chosen),
                                                        args.work))
    ctx = Cluster(args)
    results = []
    started = time.monotonic()
    try:
        ctx.start()
        # two cycles of the trace before the baseline, so that it starts from a warm cluster as every scenario does
        warmup_s = ((QUICK_WARMUP_CYCLES if args.quick else WARMUP_CYCLES) * len(ctx.chains)
                    / (args.rate * args.hosts))
        log("warm-up: %.0f s of traffic" % warmup_s)
        ctx.traffic.resume()
        time.sleep(warmup_s)
        ctx.traffic.pause()
        baseline = scenarios.Baseline()
        if args.quick:
            baseline.fault_s = QUICK_BASELINE_S
        for sc in [baseline] + chosen:
            try:
                result = run_scenario(ctx, sc)
            except Exception as ex:  # a scenario that cannot run is a failed row, and the run goes on
                result = {"id": sc.id, "title": sc.title, "passed": False, "figures": {},
                          "checks": [{"name": "ran", "passed": False, "detail": "%s: %s" % (type(ex).__name__, ex)}]}
                ctx.traffic.pause(30)
            results.append(result)
            print(row(result), flush=True)
            for c in result["checks"]:
                if not c["passed"]:
                    print("    %s: %s" % (c["name"], c["detail"][:500]), flush=True)
    finally:
        ctx.close()
    passed = bool(results) and all(r["passed"] for r in results)
    summary = {"run": args.run, "hosts": args.hosts, "passed": passed, "seconds": round(time.monotonic() - started, 1),
               "settings": {"membershipTtlS": MEMBERSHIP_TTL_S, "sessionTtlS": SESSION_TTL_S, "warmS": ctx.warm_s,
                            "afterHealS": ctx.after_heal_s, "quick": args.quick, "seed": args.seed,
                            "requests": args.requests, "ratePerHost": args.rate,
                            "blockBytes": BLOCK_BYTES, "poolBytes": POOL_BYTES, "trace": args.trace},
               "scenarios": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    if args.plots:
        import plots
        written = plots.write_all(summary, args.plots)
        log("plots: %d files in %s" % (len(written), args.plots))
    log("%s: %d of %d scenarios passed in %.0f s" % ("PASS" if passed else "FAIL",
                                                     sum(1 for r in results if r["passed"]), len(results),
                                                     summary["seconds"]))
    return 0 if passed else 1


def interrupted(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


if __name__ == "__main__":
    # explicit: a shell starts background jobs with SIGINT ignored, and scripts/qualify forwards both as SIGTERM
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        sys.exit(main())
    except KeyboardInterrupt as stop:
        log("interrupted (%s): processes stopped" % stop)
        sys.exit(130)
