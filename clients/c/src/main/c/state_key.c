/*
 * StateKey identity in C: the canonical encoding and the shard digest (SHA-256, FIPS 180-4, written here so the
 * library needs nothing beyond libc).
 */
#include "orbitkv.h"

#include <string.h>

#define DOMAIN_TAG "orbitkv/v1/state-key-shard"

typedef struct sha256
{
    uint32_t h[8];
    uint64_t bytes;
    uint8_t block[64];
    uint32_t used;
} sha256;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_init(sha256 *s)
{
    static const uint32_t initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(s->h, initial, sizeof(initial));
    s->bytes = 0;
    s->used = 0;
}

static void sha256_compress(sha256 *s, const uint8_t *block)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
    {
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
            block[4 * i + 3];
    }
    for (int i = 16; i < 64; i++)
    {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++)
    {
        const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

static void sha256_update(sha256 *s, const uint8_t *data, size_t length)
{
    s->bytes += length;
    while (length > 0)
    {
        const size_t take = 64 - s->used < length ? 64 - s->used : length;
        memcpy(s->block + s->used, data, take);
        s->used += (uint32_t)take;
        data += take;
        length -= take;
        if (s->used == 64)
        {
            sha256_compress(s, s->block);
            s->used = 0;
        }
    }
}

static void sha256_final(sha256 *s, uint8_t out[32])
{
    const uint64_t bits = s->bytes * 8;
    const uint8_t one = 0x80;
    const uint8_t zero = 0;
    sha256_update(s, &one, 1);
    while (s->used != 56)
    {
        sha256_update(s, &zero, 1);
    }
    uint8_t length[8];
    for (int i = 0; i < 8; i++)
    {
        length[i] = (uint8_t)(bits >> (56 - 8 * i));
    }
    sha256_update(s, length, 8);
    for (int i = 0; i < 8; i++)
    {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

int okv_state_key_encode(const uint8_t *ns, uint32_t ns_length, const uint8_t *hash, uint32_t hash_length,
    uint8_t *out, size_t capacity)
{
    if (ns == NULL || hash == NULL || out == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    if (ns_length < 1 || ns_length > OKV_MAX_NAMESPACE_LENGTH || hash_length < 1 || hash_length > OKV_MAX_HASH_LENGTH)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    const size_t length = 2 + (size_t)ns_length + 1 + hash_length;
    if (length > capacity)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    out[0] = (uint8_t)ns_length;
    out[1] = (uint8_t)(ns_length >> 8);
    memcpy(out + 2, ns, ns_length);
    out[2 + ns_length] = (uint8_t)hash_length;
    memcpy(out + 3 + ns_length, hash, hash_length);
    return (int)length;
}

int okv_state_key_digest(const uint8_t *ns, uint32_t ns_length, const uint8_t *hash, uint32_t hash_length,
    uint8_t digest[32])
{
    uint8_t canonical[2 + OKV_MAX_NAMESPACE_LENGTH + 1 + OKV_MAX_HASH_LENGTH];
    const int length = okv_state_key_encode(ns, ns_length, hash, hash_length, canonical, sizeof(canonical));
    if (length < 0)
    {
        return length;
    }
    sha256 s;
    sha256_init(&s);
    const uint8_t separator = 0;
    sha256_update(&s, (const uint8_t *)DOMAIN_TAG, sizeof(DOMAIN_TAG) - 1);
    sha256_update(&s, &separator, 1);
    sha256_update(&s, canonical, (size_t)length);
    sha256_final(&s, digest);
    return OKV_OK;
}

int okv_state_key_shard(const uint8_t *ns, uint32_t ns_length, const uint8_t *hash, uint32_t hash_length)
{
    uint8_t digest[32];
    const int status = okv_state_key_digest(ns, ns_length, hash, hash_length, digest);
    if (status != OKV_OK)
    {
        return status;
    }
    uint64_t prefix = 0;
    for (int i = 0; i < 8; i++)
    {
        prefix = prefix << 8 | digest[i];
    }
    return (int)(prefix % OKV_STATE_KEY_SHARD_COUNT);
}
