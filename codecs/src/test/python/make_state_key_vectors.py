#!/usr/bin/env python3
"""Independent (non-Java) reference for the StateKey canonical encoding and shard function.

Writes ../resources/state-key-shard-vectors.json. The Java test reads that file and must agree byte for byte;
any client in another language can check itself against the same file.
"""
import hashlib
import json
import os
import struct

DOMAIN_TAG = b"orbitkv/v1/state-key-shard"
SHARD_COUNT = 16


def canonical(namespace: bytes, block_hash: bytes) -> bytes:
    assert 1 <= len(namespace) <= 256 and 1 <= len(block_hash) <= 64
    return struct.pack("<H", len(namespace)) + namespace + struct.pack("B", len(block_hash)) + block_hash


def digest(namespace: bytes, block_hash: bytes) -> bytes:
    return hashlib.sha256(DOMAIN_TAG + b"\x00" + canonical(namespace, block_hash)).digest()


def shard(d: bytes) -> int:
    return int.from_bytes(d[:8], "big") % SHARD_COUNT


def cases():
    ns = b"model=llama-3-8b;dtype=bf16;layout=vllm-paged;block=16;tp=1"
    yield ns, bytes(range(32))
    yield ns, bytes(range(31)) + b"\x20"          # differs from the previous in the last byte only
    yield ns, bytes(range(31))                    # a prefix of the first hash: a different key
    yield ns + b"x", bytes(range(32))             # same hash, other namespace
    yield b"n", b"\x00"                           # shortest parts
    yield bytes([0xFF]) * 256, bytes([0xAB]) * 64  # longest parts
    yield "modèle=ü".encode("utf-8"), hashlib.sha256(b"chain-0").digest()
    prev = b""
    for i in range(24):                           # a chained prefix, spread over shards
        prev = hashlib.sha256(b"vector-chain" + prev + i.to_bytes(4, "little")).digest()
        yield b"model=qwen2-7b;dtype=fp16;layout=sglang;block=32;tp=1", prev


def main():
    vectors = []
    for namespace, block_hash in cases():
        d = digest(namespace, block_hash)
        vectors.append({
            "namespaceHex": namespace.hex(),
            "hashHex": block_hash.hex(),
            "canonicalHex": canonical(namespace, block_hash).hex(),
            "digestHex": d.hex(),
            "shard": shard(d),
        })
    out = {
        "description": "OrbitKV StateKey shard vectors: shard = uint64_be(sha256(tag || 0x00 || canonical)[0:8]) mod 16",
        "domainTag": DOMAIN_TAG.decode("ascii"),
        "shardCount": SHARD_COUNT,
        "canonicalEncoding": "u16le(len(namespace)) || namespace || u8(len(hash)) || hash",
        "vectors": vectors,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "state-key-shard-vectors.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
