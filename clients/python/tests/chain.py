"""The deterministic test chain shared with okv-tool (C) and the Java test driver: hashes and block contents
from xorshift64 streams, so that each language can check the others' bytes."""

from __future__ import annotations

MASK = 0xFFFF_FFFF_FFFF_FFFF
HASH_BYTES = 32


def _xorshift(state: int) -> int:
    state ^= (state << 13) & MASK
    state ^= state >> 7
    state ^= (state << 17) & MASK
    return state


def chain_hash(seed: int, index: int) -> bytes:
    state = (seed * 0x9E3779B97F4A7C15 + index + 1) & MASK
    out = bytearray()
    for _ in range(4):
        state = _xorshift(state)
        out += state.to_bytes(8, "little")
    return bytes(out)


def chain_fill(block_hash: bytes, length: int) -> bytes:
    state = int.from_bytes(block_hash[:8], "little") | 1
    out = bytearray()
    while len(out) < length:
        state = _xorshift(state)
        out += state.to_bytes(8, "little")
    return bytes(out[:length])
