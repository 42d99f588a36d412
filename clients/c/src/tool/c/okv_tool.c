/*
 * okv-tool: a small C program over liborbitkv for the cross-language tests and the client benchmark.
 *
 *   okv-tool DIR publish NS SEED COUNT BYTES     publish a deterministic chain (see chain_hash/chain_fill)
 *   okv-tool DIR read NS SEED COUNT BYTES        pinned lookup, read of the lease, verify every byte
 *   okv-tool DIR badargs                         bad inputs return their statuses, then one good lookup
 *   okv-tool DIR async NS SEED COUNT             8 concurrent lookup tickets, each checked
 *   okv-tool DIR bench NS KEYS ITERATIONS [GAP]  lookup round trips: prints median and mean ns; with GAP, the
 *                                                tool busy-waits GAP ns between calls (an engine's own work)
 *   okv-tool DIR chain NS SEED COUNT BYTES       a chain longer than one request: publish, pinned lookup of it and
 *                                                of it plus COUNT unpublished keys, read of the leases, verify
 *   okv-tool DIR peers NS SEED COUNT             lookup with the peers flag: one line per candidate
 *   okv-tool - shard NSHEX HASHHEX               StateKey canonical bytes, shard digest and shard (no Manager)
 *
 * Output: one line of key=value pairs; exit status 0 when everything checked out.
 */
#define _GNU_SOURCE
#include "orbitkv.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HASH_BYTES 32

static uint64_t xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* Hash of block i of chain seed: four xorshift64 outputs, little-endian. */
static void chain_hash(uint64_t seed, uint32_t index, uint8_t out[HASH_BYTES])
{
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + index + 1;
    for (int w = 0; w < 4; w++)
    {
        okv_hash_from_u64(xorshift(&state), out + 8 * w);
    }
}

/* Keys 0..count-1 of chain seed (at most OKV_MAX_KEYS), block i at region offset i * bytes (0: no destination). */
static void chain_keys(uint64_t seed, uint32_t count, uint32_t bytes, uint8_t hashes[][HASH_BYTES], okv_key *keys)
{
    for (uint32_t i = 0; i < count && i < OKV_MAX_KEYS; i++)
    {
        chain_hash(seed, i, hashes[i]);
        keys[i].hash = hashes[i];
        keys[i].hash_length = HASH_BYTES;
        keys[i].offset = (uint64_t)i * bytes;
        keys[i].length = bytes;
    }
}

/* Content of a block: an xorshift64 stream seeded from its hash's first 8 bytes (little-endian) | 1. */
static void chain_fill(const uint8_t hash[HASH_BYTES], uint8_t *dst, uint32_t length)
{
    uint64_t state = 0;
    for (int i = 7; i >= 0; i--)
    {
        state = (state << 8) | hash[i];
    }
    state |= 1;
    for (uint32_t at = 0; at < length; at += 8)
    {
        uint8_t word[8];
        okv_hash_from_u64(xorshift(&state), word);
        memcpy(dst + at, word, length - at < 8 ? length - at : 8);
    }
}

static int unhex(const char *text, uint8_t *out, size_t capacity)
{
    const size_t length = strlen(text);
    if (length % 2 != 0 || length / 2 > capacity)
    {
        return -1;
    }
    for (size_t i = 0; i < length / 2; i++)
    {
        unsigned int byte;
        if (sscanf(text + 2 * i, "%2x", &byte) != 1)
        {
            return -1;
        }
        out[i] = (uint8_t)byte;
    }
    return (int)(length / 2);
}

static void print_hex(const char *name, const uint8_t *bytes, int length)
{
    printf("%s=", name);
    for (int i = 0; i < length; i++)
    {
        printf("%02x", bytes[i]);
    }
    printf(" ");
}

static int open_client(const char *dir, const char *name, uint64_t region, okv_client **client)
{
    okv_options options;
    okv_options_init(&options);
    options.dir = dir;
    options.name = name;
    options.data_region_bytes = region;
    const int status = okv_open(&options, client);
    if (status != OKV_OK)
    {
        printf("error=open status=%d text=\"%s\" detail=\"%s\"\n", status, okv_strerror(status), okv_open_error());
    }
    return status;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a;
    const int64_t y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3)
    {
        fprintf(stderr, "usage: okv-tool DIR publish|read|badargs|async|bench ...\n");
        return 2;
    }
    const char *dir = argv[1];
    const char *cmd = argv[2];
    static okv_key keys[OKV_MAX_KEYS];
    static uint8_t hashes[OKV_MAX_KEYS][HASH_BYTES];
    static okv_result result;
    okv_client *client = NULL;

    if (strcmp(cmd, "shard") == 0)
    {
        uint8_t ns[OKV_MAX_NAMESPACE_LENGTH + 1];
        uint8_t hash[OKV_MAX_HASH_LENGTH + 1];
        uint8_t canonical[512];
        uint8_t digest[32];
        const int ns_length = argc > 4 ? unhex(argv[3], ns, sizeof(ns)) : -1;
        const int hash_length = argc > 4 ? unhex(argv[4], hash, sizeof(hash)) : -1;
        if (ns_length < 0 || hash_length < 0)
        {
            return 2;
        }
        const int length = okv_state_key_encode(ns, (uint32_t)ns_length, hash, (uint32_t)hash_length, canonical,
            sizeof(canonical));
        if (length < 0 || okv_state_key_digest(ns, (uint32_t)ns_length, hash, (uint32_t)hash_length, digest) != OKV_OK)
        {
            printf("status=%d\n", length);
            return 1;
        }
        print_hex("canonical", canonical, length);
        print_hex("digest", digest, 32);
        printf("shard=%d\n", okv_state_key_shard(ns, (uint32_t)ns_length, hash, (uint32_t)hash_length));
        return 0;
    }
    if (strcmp(cmd, "publish") == 0 || strcmp(cmd, "read") == 0)
    {
        if (argc < 7)
        {
            return 2;
        }
        const char *ns = argv[3];
        const uint64_t seed = strtoull(argv[4], NULL, 10);
        const uint32_t count = (uint32_t)strtoul(argv[5], NULL, 10);
        const uint32_t bytes = (uint32_t)strtoul(argv[6], NULL, 10);
        if (count < 1 || count > OKV_MAX_KEYS)
        {
            return 2;
        }
        if (open_client(dir, NULL, (uint64_t)count * bytes, &client) != OKV_OK)
        {
            return 1;
        }
        uint8_t *region = okv_data_region(client);
        chain_keys(seed, count, bytes, hashes, keys);
        int status;
        int ok = 1;
        if (cmd[0] == 'p')
        {
            for (uint32_t i = 0; i < count; i++)
            {
                chain_fill(hashes[i], region + keys[i].offset, bytes);
            }
            status = okv_publish(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, &result);
            printf("op=publish status=%d stored=%lld\n", status, (long long)result.value);
            ok = status == OKV_OK;
        }
        else
        {
            memset(region, 0, (size_t)count * bytes);
            status = okv_lookup(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, 1, 0, &result);
            const int64_t lease = result.lease_id;
            const int64_t prefix = result.value;
            if (status == OKV_OK)
            {
                status = okv_read(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, lease, &result);
            }
            int mismatches = 0;
            uint8_t *expected = malloc(bytes);
            for (int64_t i = 0; i < result.value && status == OKV_OK; i++)
            {
                chain_fill(hashes[i], expected, bytes);
                if (result.length[i] != (int32_t)bytes || memcmp(expected, region + keys[i].offset, bytes) != 0)
                {
                    mismatches++;
                }
            }
            free(expected);
            printf("op=read status=%d prefix=%lld lease=%lld restored=%lld mismatches=%d\n", status, (long long)prefix,
                (long long)lease, (long long)result.value, mismatches);
            ok = status == OKV_OK && mismatches == 0 && result.value == count;
        }
        okv_close(client);
        return ok ? 0 : 1;
    }
    if (strcmp(cmd, "zero-copy") == 0)
    {
        /* prepare, write each block straight into its pool slot, commit: what Java reads back is chain_fill's bytes */
        if (argc < 7)
        {
            return 2;
        }
        const char *ns = argv[3];
        const uint64_t seed = strtoull(argv[4], NULL, 10);
        const uint32_t count = (uint32_t)strtoul(argv[5], NULL, 10);
        const uint32_t bytes = (uint32_t)strtoul(argv[6], NULL, 10);
        if (count < 1 || count > OKV_MAX_KEYS || open_client(dir, NULL, bytes, &client) != OKV_OK)
        {
            return count < 1 || count > OKV_MAX_KEYS ? 2 : 1;
        }
        uint8_t *pool = okv_pool(client);
        chain_keys(seed, count, bytes, hashes, keys);
        int status = okv_prepare(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, &result);
        const int64_t reserved = result.value;
        int outside = 0;
        for (uint32_t i = 0; status == OKV_OK && i < count; i++)
        {
            if (result.status[i] != OKV_KEY_RESERVED || pool == NULL || result.pool_offset[i] < 0 ||
                (uint64_t)result.pool_offset[i] + bytes > okv_pool_bytes(client))
            {
                outside++;
                continue;
            }
            chain_fill(hashes[i], pool + result.pool_offset[i], bytes);
        }
        if (status == OKV_OK)
        {
            status = okv_commit(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, &result);
        }
        printf("op=zero-copy status=%d reserved=%lld committed=%lld unusable=%d\n", status, (long long)reserved,
            (long long)result.value, outside);
        okv_close(client);
        return status == OKV_OK && outside == 0 && result.value == count ? 0 : 1;
    }
    if (strcmp(cmd, "badargs") == 0)
    {
        if (open_client(dir, NULL, 4096, &client) != OKV_OK)
        {
            return 1;
        }
        uint8_t hash[HASH_BYTES] = { 1 };
        uint8_t long_hash[OKV_MAX_HASH_LENGTH + 1] = { 0 };
        const uint8_t ns[] = "bad-args";
        for (int i = 0; i < OKV_MAX_KEYS; i++)
        {
            keys[i].hash = hash;
            keys[i].hash_length = HASH_BYTES;
            keys[i].offset = 0;
            keys[i].length = 16;
        }
        int failures = 0;
        int status = okv_lookup(client, ns, sizeof(ns) - 1, keys, OKV_MAX_KEYS + 1, 0, 0, &result);
        failures += status != OKV_S_BATCH_TOO_LARGE;
        printf("oversized=%d ", status);
        keys[0].hash = long_hash;
        keys[0].hash_length = sizeof(long_hash);
        status = okv_lookup(client, ns, sizeof(ns) - 1, keys, 1, 0, 0, &result);
        failures += status != OKV_S_KEY_TOO_LARGE;
        printf("long_hash=%d ", status);
        keys[0].hash = hash;
        keys[0].hash_length = HASH_BYTES;
        keys[0].offset = 4090;
        status = okv_publish(client, ns, sizeof(ns) - 1, keys, 1, &result);
        failures += status != OKV_S_OUT_OF_RANGE;
        printf("out_of_range=%d ", status);
        status = okv_release(client, 123456789, &result);
        failures += status != OKV_S_UNKNOWN_LEASE;
        printf("unknown_lease=%d ", status);
        keys[0].offset = 0;
        status = okv_lookup(client, ns, sizeof(ns) - 1, keys, 1, 0, 0, &result);
        failures += status != OKV_OK;
        printf("good=%d ", status);
        /* ABI evolution: a struct shorter than version 1's is refused; a shorter result is written only so far */
        okv_options tiny;
        okv_options_init(&tiny);
        tiny.size = 8;
        okv_client *none = NULL;
        status = okv_open(&tiny, &none);
        failures += status != OKV_E_INVALID_ARGUMENT || none != NULL;
        printf("short_options=%d ", status);
        /* the wait's yield window is 0..1 s; a caller built before the field (version 1's size) gets the default */
        okv_options bad_yield;
        okv_options_init(&bad_yield);
        bad_yield.dir = dir;
        bad_yield.wait_yield_us = 1000001;
        status = okv_open(&bad_yield, &none);
        bad_yield.wait_yield_us = -1;
        const int negative = okv_open(&bad_yield, &none);
        failures += status != OKV_E_INVALID_ARGUMENT || negative != OKV_E_INVALID_ARGUMENT || none != NULL;
        printf("bad_wait_yield=%d,%d ", status, negative);
        okv_options v1;
        okv_options_init(&v1);
        v1.dir = dir;
        v1.name = "badargs-v1";
        v1.data_region_bytes = 4096;
        v1.wait_yield_us = -1; /* past a version-1 caller's struct: never read */
        v1.size = offsetof(okv_options, wait_yield_us);
        status = okv_open(&v1, &none);
        failures += status != OKV_OK || none == NULL;
        printf("v1_options=%d ", status);
        if (none != NULL)
        {
            okv_close(none);
            none = NULL;
        }
        static okv_result small;
        memset(&small, 0xab, sizeof(small));
        small.size = offsetof(okv_result, status);
        status = okv_lookup(client, ns, sizeof(ns) - 1, keys, 1, 0, 0, &small);
        failures += status != OKV_OK || small.key_count != 1 || small.status[0] != 0xab;
        printf("short_result=%d failures=%d\n", status, failures);
        okv_close(client);
        return failures == 0 ? 0 : 1;
    }
    if (strcmp(cmd, "async") == 0)
    {
        if (argc < 6 || open_client(dir, NULL, 4096, &client) != OKV_OK)
        {
            return 1;
        }
        const char *ns = argv[3];
        const uint64_t seed = strtoull(argv[4], NULL, 10);
        const uint32_t count = (uint32_t)strtoul(argv[5], NULL, 10);
        chain_keys(seed, count, 0, hashes, keys);
        int64_t tickets[OKV_MAX_TICKETS];
        int failures = 0;
        for (int t = 0; t < OKV_MAX_TICKETS; t++)
        {
            /* ticket t asks for the first t+1 keys of the chain */
            const uint32_t n = (uint32_t)(t % (int)count) + 1;
            const int status = okv_submit_lookup(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, n, 0, 0,
                &tickets[t]);
            failures += status != OKV_OK;
        }
        int64_t extra;
        const int over = okv_submit_lookup(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, 1, 0, 0, &extra);
        failures += over != OKV_E_TOO_MANY_TICKETS;
        int answered = 0;
        for (int t = OKV_MAX_TICKETS - 1; t >= 0; t--)
        {
            const uint32_t n = (uint32_t)(t % (int)count) + 1;
            const int status = okv_wait(client, tickets[t], 5000, &result);
            if (status == OKV_OK && result.value == n && result.key_count == (int32_t)n)
            {
                answered++;
            }
            else
            {
                fprintf(stderr, "ticket %d: status %d value %lld\n", t, status, (long long)result.value);
                failures++;
            }
        }
        failures += okv_poll(client, tickets[0], &result) != OKV_E_UNKNOWN_TICKET;
        printf("op=async tickets=%d answered=%d over_limit=%d failures=%d\n", OKV_MAX_TICKETS, answered, over, failures);
        okv_close(client);
        return failures == 0 ? 0 : 1;
    }
    if (strcmp(cmd, "bench") == 0)
    {
        if (argc < 6 || open_client(dir, NULL, 4096, &client) != OKV_OK)
        {
            return 1;
        }
        const char *ns = argv[3];
        const uint32_t count = (uint32_t)strtoul(argv[4], NULL, 10);
        const int iterations = atoi(argv[5]);
        const int64_t gap_ns = argc > 6 ? strtoll(argv[6], NULL, 10) : 0;
        chain_keys(7, count, 0, hashes, keys);
        int64_t *samples = malloc(sizeof(int64_t) * (size_t)iterations);
        for (int i = 0; i < iterations; i++)
        {
            if (gap_ns > 0)
            {
                const int64_t until = now_ns() + gap_ns;
                while (now_ns() < until)
                {
                }
            }
            const int64_t start = now_ns();
            okv_lookup(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, 0, 0, &result);
            samples[i] = now_ns() - start;
        }
        int64_t total = 0;
        for (int i = 0; i < iterations; i++)
        {
            total += samples[i];
        }
        qsort(samples, (size_t)iterations, sizeof(int64_t), cmp_i64);
        printf("op=bench keys=%u iterations=%d gap_ns=%lld median_ns=%lld mean_ns=%lld\n", count, iterations,
            (long long)gap_ns, (long long)samples[iterations / 2], (long long)(total / iterations));
        free(samples);
        okv_close(client);
        return 0;
    }
    if (strcmp(cmd, "peers") == 0)
    {
        if (argc < 6 || open_client(dir, NULL, 4096, &client) != OKV_OK)
        {
            return 1;
        }
        const char *ns = argv[3];
        const uint64_t seed = strtoull(argv[4], NULL, 10);
        const uint32_t count = (uint32_t)strtoul(argv[5], NULL, 10);
        chain_keys(seed, count, 0, hashes, keys);
        okv_result_init(&result);
        const int status = okv_lookup(client, (const uint8_t *)ns, (uint32_t)strlen(ns), keys, count, 0, 1, &result);
        printf("status=%d prefix=%lld candidates=%d owners=%d\n", status, (long long)result.value,
            result.candidate_count, result.owner_count);
        for (int32_t i = 0; i < result.candidate_count; i++)
        {
            const okv_candidate *c = &result.candidates[i];
            const okv_owner *o = &result.owners[c->owner_index];
            const uint64_t msb = (uint64_t)o->runtime_uuid_msb;
            const uint64_t lsb = (uint64_t)o->runtime_uuid_lsb;
            printf("candidate key=%d owner=%s uuid=%08llx-%04llx-%04llx-%04llx-%012llx tier=%s sequence=%lld length=%d\n",
                c->key_index, o->node_id, (unsigned long long)(msb >> 32), (unsigned long long)((msb >> 16) & 0xffff),
                (unsigned long long)(msb & 0xffff), (unsigned long long)(lsb >> 48),
                (unsigned long long)(lsb & 0xffffffffffffULL), c->tier == OKV_KEY_DRAM ? "DRAM" :
                (c->tier == OKV_KEY_SSD ? "SSD" : "OTHER"), (long long)c->insertion_sequence, c->length);
        }
        okv_close(client);
        return status == OKV_OK ? 0 : 1;
    }
    if (strcmp(cmd, "chain") == 0)
    {
        if (argc < 7)
        {
            return 2;
        }
        const char *ns = argv[3];
        const uint32_t ns_length = (uint32_t)strlen(ns);
        const uint64_t seed = strtoull(argv[4], NULL, 10);
        const uint32_t count = (uint32_t)strtoul(argv[5], NULL, 10);
        const uint32_t bytes = (uint32_t)strtoul(argv[6], NULL, 10);
        if (count < 1 || open_client(dir, NULL, (uint64_t)count * bytes, &client) != OKV_OK)
        {
            return 1;
        }
        /* the chain and COUNT more keys nobody published */
        const uint32_t total = 2 * count;
        okv_key *chain_keys = calloc(total, sizeof(okv_key));
        uint8_t *chain_hashes = malloc((size_t)total * HASH_BYTES);
        enum { CAPACITY = 16 };
        static okv_result results[CAPACITY];
        static okv_result leases[CAPACITY];
        uint8_t *region = okv_data_region(client);
        for (uint32_t i = 0; i < total; i++)
        {
            chain_hash(seed, i, chain_hashes + (size_t)i * HASH_BYTES);
            chain_keys[i].hash = chain_hashes + (size_t)i * HASH_BYTES;
            chain_keys[i].hash_length = HASH_BYTES;
            chain_keys[i].offset = (uint64_t)(i % count) * bytes;
            chain_keys[i].length = bytes;
        }
        for (uint32_t i = 0; i < count; i++)
        {
            chain_fill(chain_keys[i].hash, region + chain_keys[i].offset, bytes);
        }
        for (int i = 0; i < CAPACITY; i++)
        {
            okv_result_init(&results[i]);
            okv_result_init(&leases[i]);
        }
        int failures = 0;
        /* one request cannot take the chain */
        const int single = okv_lookup(client, (const uint8_t *)ns, ns_length, chain_keys, count, 0, 0, &result);
        failures += count > (uint32_t)okv_max_keys_per_request(client) && single != OKV_S_BATCH_TOO_LARGE;
        uint32_t published_requests = 0;
        int status = okv_publish_chain(client, (const uint8_t *)ns, ns_length, chain_keys, count, results, CAPACITY,
            &published_requests);
        int64_t stored = 0;
        for (uint32_t r = 0; r < published_requests; r++)
        {
            stored += results[r].value;
            failures += results[r].key_base != (int32_t)(r * (uint32_t)okv_max_keys_per_request(client));
        }
        failures += status != OKV_OK || stored != count;
        /* a pinned lookup of the chain and the unpublished keys after it: the prefix is the chain, and the lookup
         * stops at the first request whose prefix is short */
        uint32_t lookup_requests = 0;
        status = okv_lookup_chain(client, (const uint8_t *)ns, ns_length, chain_keys, total, 1, 0, leases, CAPACITY,
            &lookup_requests);
        int64_t prefix = 0;
        int64_t lease_ids[CAPACITY] = { 0 };
        for (uint32_t r = 0; r < lookup_requests; r++)
        {
            prefix += leases[r].value;
            lease_ids[r] = leases[r].lease_id;
        }
        const int32_t needed = okv_chain_requests(client, ns_length, chain_keys, total);
        failures += status != OKV_OK || prefix != count;
        memset(region, 0, (size_t)count * bytes);
        uint32_t read_requests = 0;
        status = okv_read_chain(client, (const uint8_t *)ns, ns_length, chain_keys, count, lease_ids, lookup_requests,
            results, CAPACITY, &read_requests);
        int64_t restored = 0;
        int mismatches = 0;
        uint8_t *expected = malloc(bytes);
        for (uint32_t r = 0; r < read_requests; r++)
        {
            restored += results[r].value;
            for (int32_t k = 0; k < results[r].key_count; k++)
            {
                const uint32_t i = (uint32_t)results[r].key_base + (uint32_t)k;
                chain_fill(chain_keys[i].hash, expected, bytes);
                if (results[r].length[k] != (int32_t)bytes || memcmp(expected, region + chain_keys[i].offset, bytes) != 0)
                {
                    mismatches++;
                }
            }
        }
        free(expected);
        failures += status != OKV_OK || restored != count || mismatches != 0;
        /* every lease was consumed: releasing one again is unknown */
        for (uint32_t r = 0; r < lookup_requests; r++)
        {
            failures += lease_ids[r] != 0 && okv_release(client, lease_ids[r], &result) != OKV_S_UNKNOWN_LEASE;
        }
        /* a chain needing more requests than the results hold is refused before anything is sent */
        uint32_t none = 99;
        const int too_long = okv_lookup_chain(client, (const uint8_t *)ns, ns_length, chain_keys, total, 0, 0, results,
            1, &none);
        failures += count > (uint32_t)okv_max_keys_per_request(client) && (too_long != OKV_S_BATCH_TOO_LARGE || none != 0);
        printf("op=chain single=%d publish_requests=%u stored=%lld lookup_requests=%u needed=%d prefix=%lld "
            "read_requests=%u restored=%lld mismatches=%d too_long=%d failures=%d\n", single, published_requests,
            (long long)stored, lookup_requests, needed, (long long)prefix, read_requests, (long long)restored,
            mismatches, too_long, failures);
        free(chain_keys);
        free(chain_hashes);
        okv_close(client);
        return failures == 0 ? 0 : 1;
    }
    fprintf(stderr, "unknown command %s\n", cmd);
    return 2;
}
