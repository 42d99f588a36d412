"""Read Managers' authority logs (manager/.../authority/AuthorityLogDescriptor.java) without a JVM, and check that no
Manager used authority it no longer had.

A log is `authority.log` in a Manager's directory (earlier processes' as `authority.1.log` .. `authority.3.log`): a
4096-byte header, then two rings of 128-byte records (section 0 written by the membership threads, section 1 by the
agent thread). All numbers little-endian. A record is taken only when its sequence (index + 1) reads the same before
and after its body, so a log can be read while its Manager writes it, or after the Manager was killed.

Times are CLOCK_MONOTONIC nanoseconds (Java's System.nanoTime on Linux): one clock for every process of the host,
network namespaces included, which is what lets records of different Managers be ordered against each other.

    python3 authority.py FILE_OR_DIR...            # the records, one JSON object per log
    python3 authority.py --check DIR...            # the checker's verdict as JSON; exit 1 on a violation
"""

import json
import mmap
import os
import struct
import sys

MAGIC = 0x4C414B4F
VERSION = 1
RECORD_LENGTH = 128
SECTIONS_OFFSET = 256
SECTION_LENGTH = 64
FILE_NAME = "authority.log"
KEPT_LOGS = 3

REGISTERED, VALIDITY, FENCED, GRANT, FETCH_ACCEPTED, CLOSING = 1, 2, 3, 4, 5, 6
TYPE_NAMES = {REGISTERED: "REGISTERED", VALIDITY: "VALIDITY", FENCED: "FENCED", GRANT: "GRANT",
              FETCH_ACCEPTED: "FETCH_ACCEPTED", CLOSING: "CLOSING"}
MEMBERSHIP_SECTION, AGENT_SECTION = 0, 1

_HEADER = struct.Struct("<iiiiqqqqqii")
_RECORD = struct.Struct("<qiiqqqqq9q")


def uuid_text(msb, lsb):
    h = "%016x%016x" % (msb & (2 ** 64 - 1), lsb & (2 ** 64 - 1))
    return "%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])


def _record(raw, section):
    seq, rtype, incarnation, mono, wall, epoch, msb, lsb, *f = _RECORD.unpack(raw)
    r = {"section": section, "index": seq - 1, "type": TYPE_NAMES.get(rtype, "UNKNOWN(%d)" % rtype),
         "incarnation": incarnation, "monoNs": mono, "wallMs": wall, "epoch": epoch, "uuid": uuid_text(msb, lsb)}
    if rtype == REGISTERED:
        r.update(leaseId=f[0], ttlSecs=f[1], validUntilNs=f[2], previousCause=f[3])
    elif rtype == VALIDITY:
        r.update(validUntilNs=f[0], sentNs=f[1])
    elif rtype == FENCED:
        r.update(cause=f[0], validUntilNs=f[1])
    elif rtype == GRANT:
        r.update(requester=uuid_text(f[0], f[1]), requesterSessionId=f[2], transferSessionId=f[3], validUntilNs=f[4],
                 keys=f[5], bytes=f[6])
    elif rtype == FETCH_ACCEPTED:
        r.update(source=uuid_text(f[0], f[1]), requesterSessionId=f[2], transferSessionId=f[3], keyIndex=f[4],
                 bytes=f[5])
    elif rtype == CLOSING:
        r.update(validUntilNs=f[0])
    return r


def read(path):
    """One log: {file, pid, nodeId, cluster, processUuid, startWallMs, startMonoNs, sections: [{capacity, position,
    overwritten}], records (every readable record, section by section, oldest first), torn (records skipped because
    they were being written)}; None if the file has no complete header (a Manager still starting)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 4096:
            return None
        mm = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
        try:
            return _read(mm, path)
        finally:
            mm.close()


def _read(mm, path):
    (magic, version, header_length, record_length, pid, start_wall, start_mono, umsb, ulsb, sections,
     node_len) = _HEADER.unpack_from(mm, 0)
    if magic != MAGIC:
        return None
    if version != VERSION or record_length != RECORD_LENGTH:
        raise ValueError("%s: authority log version %d, record length %d: this reader knows version %d, %d" % (
            path, version, record_length, VERSION, RECORD_LENGTH))
    node = bytes(mm[64:64 + min(node_len, 64)]).decode("utf-8", "replace")
    cluster_len = struct.unpack_from("<i", mm, 128)[0]
    cluster = bytes(mm[132:132 + min(cluster_len, 64)]).decode("utf-8", "replace")
    log = {"file": path, "pid": pid, "nodeId": node, "cluster": cluster, "processUuid": uuid_text(umsb, ulsb),
           "startWallMs": start_wall, "startMonoNs": start_mono, "sections": [], "records": [], "torn": 0}
    for s in range(sections):
        base = SECTIONS_OFFSET + s * SECTION_LENGTH
        data, capacity, position = struct.unpack_from("<qqq", mm, base)
        first = max(0, position - capacity)
        for i in range(first, position):
            off = data + (i % capacity) * record_length
            raw = bytes(mm[off:off + record_length])
            after = struct.unpack_from("<q", mm, off)[0]
            seq = struct.unpack_from("<q", raw, 0)[0]
            if seq != i + 1 or after != seq:
                log["torn"] += 1  # overwritten meanwhile, or being written
                continue
            log["records"].append(_record(raw, s))
        log["sections"].append({"capacity": capacity, "position": position, "overwritten": first})
    return log


def log_files(directory):
    """A Manager directory's logs, oldest first."""
    names = ["authority.%d.log" % n for n in range(KEPT_LOGS, 0, -1)] + [FILE_NAME]
    return [os.path.join(directory, n) for n in names if os.path.exists(os.path.join(directory, n))]


def read_dirs(dirs):
    logs = []
    for d in dirs:
        for path in log_files(d):
            log = read(path)
            if log is not None:
                logs.append(log)
    return logs


def check(logs, since_ns=0):
    """The "no stale authority" verdict over the logs of every Manager of one host: {violations: [text], figures}.

    Only grants, accepted sessions and registrations at or after since_ns are judged (a scenario's own window); the
    rest of each log is context. Rules:
    - a grant is decided before its incarnation's validity deadline (the one it records, which is never earlier than
      any recorded before it), before that incarnation's FENCED and CLOSING records, after its REGISTERED record, and
      not after a newer incarnation of the same node registered (retirement);
    - a grant's deadline is not later than the final deadline its FENCED or CLOSING record gives;
    - bytes accepted under a session: the source's log has the grant of that session to this requester incarnation
      (unless the source's log is unknown or wrapped past it: counted, not judged), and the grant passed the rules
      above and came before the acceptance;
    - per node, epochs of successive registrations only increase (over its processes' logs too);
    - per log section, the monotonic clock never goes back.
    """
    violations = []
    incarnations = {}  # uuid -> {node, number, epoch, registered, fenced, closing, log}
    grants = {}  # (source uuid, transfer session id) -> grant record
    registrations = {}  # node -> [(mono, epoch, uuid, file)]
    wrapped_agent = set()
    counts = {name: 0 for name in TYPE_NAMES.values()}
    overwritten = 0
    torn = 0

    for log in logs:
        node = log["nodeId"]
        torn += log["torn"]
        for i, s in enumerate(log["sections"]):
            overwritten += s["overwritten"]
            if i == AGENT_SECTION and s["overwritten"]:
                wrapped_agent.add(log["file"])
        last_by_section = {}
        for r in log["records"]:
            counts[r["type"]] = counts.get(r["type"], 0) + 1
            prev = last_by_section.get(r["section"])
            if prev is not None and r["monoNs"] < prev:
                violations.append("%s (%s): section %d goes back in time at record %d" % (
                    node, os.path.basename(log["file"]), r["section"], r["index"]))
            last_by_section[r["section"]] = r["monoNs"]
            inc = incarnations.setdefault(r["uuid"], {"node": node, "number": r["incarnation"], "epoch": r["epoch"],
                                                      "registered": None, "fenced": None, "closing": None,
                                                      "file": log["file"], "deadlines": []})
            if r["type"] == "REGISTERED":
                inc["registered"] = r
                inc["deadlines"].append(r["validUntilNs"])
                registrations.setdefault(node, []).append((r["monoNs"], r["epoch"], r["uuid"], log["file"]))
            elif r["type"] == "VALIDITY":
                inc["deadlines"].append(r["validUntilNs"])
            elif r["type"] == "FENCED":
                if inc["fenced"] is None:
                    inc["fenced"] = r
            elif r["type"] == "CLOSING":
                inc["closing"] = r
            elif r["type"] == "GRANT":
                grants[(r["uuid"], r["transferSessionId"])] = r

    def judged(r):
        return r["monoNs"] >= since_ns

    # epochs per node, in time order over every process of the node
    for node, regs in registrations.items():
        regs.sort()
        for (t0, e0, u0, _f0), (t1, e1, u1, _f1) in zip(regs, regs[1:]):
            if t1 >= since_ns and e1 <= e0:
                violations.append("%s: epoch %d (%s) registered after epoch %d (%s)" % (node, e1, u1, e0, u0))

    def newer_registration(node, uuid, before_ns):
        for t, _e, u, _f in registrations.get(node, []):
            if u != uuid and t < before_ns and t > (incarnations[uuid]["registered"] or {"monoNs": -1})["monoNs"]:
                return u
        return None

    margins = []
    judged_grants = 0
    for (uuid, _sid), g in grants.items():
        if not judged(g):
            continue
        judged_grants += 1
        inc = incarnations[uuid]
        who = "%s incarnation %d (epoch %d)" % (inc["node"], g["incarnation"], g["epoch"])
        t = g["monoNs"]
        margins.append(g["validUntilNs"] - t)
        if t >= g["validUntilNs"]:
            violations.append("%s granted session %d at %d, %.1f ms after its validity deadline" % (
                who, g["transferSessionId"], t, (t - g["validUntilNs"]) / 1e6))
        for kind in ("fenced", "closing"):
            end = inc[kind]
            if end is not None:
                if t >= end["monoNs"]:
                    violations.append("%s granted session %d %.1f ms after it was %s" % (
                        who, g["transferSessionId"], (t - end["monoNs"]) / 1e6,
                        "fenced (cause %d)" % end["cause"] if kind == "fenced" else "closing"))
                if g["validUntilNs"] > end["validUntilNs"]:
                    violations.append("%s granted session %d with a deadline %.1f ms past its final one" % (
                        who, g["transferSessionId"], (g["validUntilNs"] - end["validUntilNs"]) / 1e6))
        if inc["registered"] is not None and t < inc["registered"]["monoNs"]:
            violations.append("%s granted session %d before it registered" % (who, g["transferSessionId"]))
        newer = newer_registration(inc["node"], uuid, t) if inc["registered"] is not None else None
        if newer is not None:
            violations.append("%s granted session %d after a newer incarnation %s registered" % (
                who, g["transferSessionId"], newer))

    accepted = 0
    unknown_source = 0
    unmatched_wrapped = 0
    for log in logs:
        for a in log["records"]:
            if a["type"] != "FETCH_ACCEPTED" or not judged(a):
                continue
            accepted += 1
            src = incarnations.get(a["source"])
            who = "%s incarnation %d" % (log["nodeId"], a["incarnation"])
            if src is None:
                unknown_source += 1
                continue
            g = grants.get((a["source"], a["transferSessionId"]))
            if g is None or g["requester"] != a["uuid"] or g["requesterSessionId"] != a["requesterSessionId"]:
                if src["file"] in wrapped_agent:
                    unmatched_wrapped += 1
                else:
                    violations.append("%s accepted bytes of session %d from %s incarnation %d that no grant of its "
                                      "log covers" % (who, a["transferSessionId"], src["node"], src["number"]))
                continue
            if a["monoNs"] < g["monoNs"]:
                violations.append("%s accepted bytes of session %d from %s %.1f ms before the source granted it" % (
                    who, a["transferSessionId"], src["node"], (g["monoNs"] - a["monoNs"]) / 1e6))
            if not judged(g):
                # its grant is outside the window, so the grant rules did not look at it: look now
                end = src["fenced"] or src["closing"]
                if g["monoNs"] >= g["validUntilNs"] or (end is not None and g["monoNs"] >= end["monoNs"]):
                    violations.append("%s accepted bytes of session %d from %s, granted after its authority ended" % (
                        who, a["transferSessionId"], src["node"]))

    figures = {
        "logs": len(logs), "records": counts, "overwritten": overwritten, "torn": torn,
        "grantsJudged": judged_grants, "acceptedJudged": accepted, "acceptedFromUnknownSource": unknown_source,
        "acceptedUnmatchedInWrappedLog": unmatched_wrapped,
        "fences": sum(1 for i in incarnations.values() if i["fenced"] is not None and judged(i["fenced"])),
        "minGrantMarginMs": round(min(margins) / 1e6, 1) if margins else None,
    }
    first_fence = {}
    for i in incarnations.values():
        f = i["fenced"]
        if f is not None and judged(f):
            first_fence[i["node"]] = min(first_fence.get(i["node"], f["monoNs"]), f["monoNs"])
    return {"violations": violations, "figures": figures, "firstFenceNs": first_fence}



def check_dirs(dirs, since_ns=0):
    return check(read_dirs(dirs), since_ns)


def main(argv):
    if argv and argv[0] == "--check":
        verdict = check_dirs(argv[1:])
        json.dump(verdict, sys.stdout, indent=1)
        print()
        return 1 if verdict["violations"] else 0
    for arg in argv:
        paths = log_files(arg) if os.path.isdir(arg) else [arg]
        for path in paths:
            json.dump(read(path), sys.stdout)
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
