#!/usr/bin/env python3
"""Independent (non-Java) reference for catalog placement: equal-weight rendezvous hashing of 16 shards.

Writes ../resources/shard-placement-vectors.json; ShardPlacementTest must agree with every entry.
score(shard, node) = SHA-256(b"orbitkv/v1/placement-score" + b"\\x00" + shard as 4-byte big-endian + node utf-8),
compared as an unsigned big-endian number; highest wins, exact ties go to the smallest node id.
fingerprint = first 16 bytes (hex) of SHA-256(b"orbitkv/v1/placement-fingerprint" + b"\\x00" + canonical config),
canonical config = "shards=16;nodes=" + ",".join(sorted(set(nodes))) for one replica per shard, and
"shards=16;replicas=R;nodes=..." for R > 1 copies.
With R copies, a shard's replicas are the min(R, len(nodes)) nodes of highest score, highest first (replica 0 is the
host above). "vectors" (one copy) never change; "replicaVectors" hold the R-copy cases.
"weightedVectors" add capacity weights (1-1000, 1 when not given) and an agreed seed: with a seed the score input ends
with b"\\x00" + seed; with any weight other than 1 a node ranks by key = w / -ln(u), u = (first 53 bits of the score
+ 0.5) / 2**53 (ties: score, then id); the canonical config appends ";weights=a=2,..." (weights other than 1, by id)
and ";seed=S".
"""
import hashlib
import json
import math
import os

SHARD_COUNT = 16
SCORE_TAG = b"orbitkv/v1/placement-score"
FINGERPRINT_TAG = b"orbitkv/v1/placement-fingerprint"


def score(shard: int, node: str) -> bytes:
    return hashlib.sha256(SCORE_TAG + b"\x00" + shard.to_bytes(4, "big") + node.encode("utf-8")).digest()


def seeded_score(shard: int, node: str, seed: str) -> bytes:
    data = SCORE_TAG + b"\x00" + shard.to_bytes(4, "big") + node.encode("utf-8")
    if seed:
        data += b"\x00" + seed.encode("utf-8")
    return hashlib.sha256(data).digest()


def weighted_key(score_bytes: bytes, weight: int) -> float:
    top = int.from_bytes(score_bytes[:8], "big") >> 11
    u = (top + 0.5) / float(1 << 53)
    return weight / -math.log(u)


def weighted_placement(nodes, replicas, weights, seed):
    canonical = sorted(set(nodes))
    heavier = {n: w for n, w in sorted(weights.items()) if w != 1}
    count = min(replicas, len(canonical))
    by_shard = []
    for s in range(SHARD_COUNT):
        scores = {n: seeded_score(s, n, seed) for n in canonical}
        if heavier:
            keys = {n: weighted_key(scores[n], heavier.get(n, 1)) for n in canonical}
        else:
            keys = {n: 0.0 for n in canonical}
        # key, then score, highest first; the stable sort keeps id order on exact ties
        order = sorted(canonical, key=lambda n: (keys[n], scores[n]), reverse=True)
        by_shard.append(order[:count])
    config = "shards=%d" % SHARD_COUNT
    if replicas != 1:
        config += ";replicas=%d" % replicas
    config += ";nodes=" + ",".join(canonical)
    if heavier:
        config += ";weights=" + ",".join("%s=%d" % (n, w) for n, w in heavier.items())
    if seed:
        config += ";seed=" + seed
    fp = hashlib.sha256(FINGERPRINT_TAG + b"\x00" + config.encode("utf-8")).digest()[:16].hex()
    return canonical, config, fp, count, by_shard


def weighted_cases():
    yield ["a", "b", "c", "d"], 1, {"a": 3}, ""
    yield ["a", "b", "c", "d"], 3, {"a": 2, "b": 1, "c": 4}, ""
    yield ["a", "b", "c"], 1, {}, "s1"                        # a seed alone
    yield ["a", "b", "c", "d", "e"], 3, {"e": 1000}, "blue"
    yield ["host%02d" % i for i in range(16)], 5, {"host03": 7, "host11": 2}, "r-2026"


def placement(nodes):
    canonical = sorted(set(nodes))
    hosts = []
    for s in range(SHARD_COUNT):
        # max by score; among equal scores the smallest id wins (sorted order, strict comparison)
        best = None
        for n in canonical:
            if best is None or score(s, n) > score(s, best):
                best = n
        hosts.append(best)
    config = "shards=%d;nodes=%s" % (SHARD_COUNT, ",".join(canonical))
    fp = hashlib.sha256(FINGERPRINT_TAG + b"\x00" + config.encode("utf-8")).digest()[:16].hex()
    return canonical, config, fp, hosts


def ranked(shard: int, canonical):
    # highest score first; equal scores keep sorted id order (the sort is stable)
    return sorted(canonical, key=lambda n: score(shard, n), reverse=True)


def replica_placement(nodes, replicas):
    canonical = sorted(set(nodes))
    count = min(replicas, len(canonical))
    by_shard = [ranked(s, canonical)[:count] for s in range(SHARD_COUNT)]
    if replicas == 1:
        config = "shards=%d;nodes=%s" % (SHARD_COUNT, ",".join(canonical))
    else:
        config = "shards=%d;replicas=%d;nodes=%s" % (SHARD_COUNT, replicas, ",".join(canonical))
    fp = hashlib.sha256(FINGERPRINT_TAG + b"\x00" + config.encode("utf-8")).digest()[:16].hex()
    return canonical, config, fp, count, by_shard


def replica_cases():
    yield ["a", "b", "c"], 1                      # one copy: the same config and fingerprint as in "vectors"
    yield ["a", "b", "c"], 3                      # every node holds every shard, ranks differ per shard
    yield ["a", "b", "c", "d"], 3
    yield ["a", "b", "c", "d", "e"], 3            # adding e: each shard loses at most one old replica
    yield ["a"], 3                                # fewer nodes than R: one copy really held
    yield ["b", "a"], 3                           # two copies of three
    yield ["node-1", "node-2", "node-3", "node-4", "node-5"], 2
    yield ["host%02d" % i for i in range(16)], 5  # the maximum of both


def cases():
    yield ["a"]
    yield ["a", "b"]
    yield ["a", "b", "c"]
    yield ["c", "a", "b", "a"]                    # unsorted with a duplicate: same as a,b,c
    yield ["a", "b", "c", "d"]                    # adding a node moves only the shards it wins
    yield ["a", "c"]                              # removing b from the config
    yield ["node-1", "node-2", "node-3", "node-4", "node-5"]
    yield ["host%02d" % i for i in range(16)]     # the maximum
    yield ["gpu-box.rack7_A", "x", "Z9"]


def main():
    vectors = []
    for nodes in cases():
        canonical, config, fp, hosts = placement(nodes)
        vectors.append({
            "catalogNodes": nodes,
            "canonicalNodes": canonical,
            "canonicalConfig": config,
            "fingerprint": fp,
            "hostByShard": hosts,
        })
    replica_vectors = []
    for nodes, replicas in replica_cases():
        canonical, config, fp, count, by_shard = replica_placement(nodes, replicas)
        replica_vectors.append({
            "catalogNodes": nodes,
            "replicas": replicas,
            "canonicalNodes": canonical,
            "canonicalConfig": config,
            "fingerprint": fp,
            "replicaCount": count,
            "replicasByShard": by_shard,
        })
    weighted_vectors = []
    for nodes, replicas, weights, seed in weighted_cases():
        canonical, config, fp, count, by_shard = weighted_placement(nodes, replicas, weights, seed)
        weighted_vectors.append({
            "catalogNodes": nodes,
            "replicas": replicas,
            "weights": weights,
            "seed": seed,
            "canonicalConfig": config,
            "fingerprint": fp,
            "replicaCount": count,
            "replicasByShard": by_shard,
        })
    scores = [{"shard": s, "node": n, "scoreHex": score(s, n).hex()} for s, n in [(0, "a"), (15, "host15"), (7, "Z9")]]
    out = {
        "scoreDomainTag": SCORE_TAG.decode(),
        "fingerprintDomainTag": FINGERPRINT_TAG.decode(),
        "shardCount": SHARD_COUNT,
        "scores": scores,
        "vectors": vectors,
        "replicaVectors": replica_vectors,
        "weightedVectors": weighted_vectors,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "shard-placement-vectors.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
