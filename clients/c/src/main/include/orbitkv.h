/*
 * orbitkv.h: the C client of an OrbitKV Manager (docs/clients.md, docs/engine-ring.md).
 *
 * An engine attaches to the Manager on its host through the Manager's CnC file (shared memory), gets a data
 * region of its own, places blocks there and names them by offset; the Manager copies them into its pool
 * (publish) and back (read). Every call returns an int status: 0 (OKV_OK), a Manager status code (> 0, the
 * StatusCode values of the engine ring schema) or a library status (< 0). okv_strerror names each.
 *
 * ABI: opaque handles; option and result structs start with a size field the caller sets (okv_options_init,
 * okv_result_init), so later versions can append fields: the library reads only options->size bytes (missing
 * fields keep their defaults) and writes only result->size bytes. Depends on libc and libpthread only.
 */
#ifndef ORBITKV_H
#define ORBITKV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OKV_ABI_VERSION 1

/* Protocol limits (the Manager's may be lower: okv_max_keys_per_request). */
#define OKV_MAX_KEYS 512
#define OKV_MAX_NAMESPACE_LENGTH 256
#define OKV_MAX_HASH_LENGTH 64
#define OKV_MAX_TOKENS_PER_BLOCK 2048
#define OKV_MAX_CLIENT_NAME_LENGTH 128
#define OKV_MAX_MESSAGE_LENGTH 1024
/* Asynchronous tickets one client may have outstanding. */
#define OKV_MAX_TICKETS 8
/* Peer detail one answer carries (the protocol's limits): candidate rows, distinct owners, owner node id bytes. */
#define OKV_MAX_CANDIDATES 512
#define OKV_MAX_OWNERS 32
#define OKV_MAX_NODE_ID_LENGTH 64

/* Library statuses (negative); the Manager's codes are positive and listed by okv_strerror. */
#define OKV_OK 0
#define OKV_E_INVALID_ARGUMENT (-1)
#define OKV_E_NO_MANAGER (-2)
#define OKV_E_INCOMPATIBLE_LAYOUT (-3)
#define OKV_E_STALE_MANAGER (-4)
#define OKV_E_NO_FREE_SLOT (-5)
#define OKV_E_TIMEOUT (-6)
#define OKV_E_MANAGER_DIED (-7)
#define OKV_E_DETACHED (-8)
#define OKV_E_CLOSED (-9)
#define OKV_E_SYSTEM (-10)
#define OKV_E_PROTOCOL (-11)
#define OKV_E_TOO_MANY_TICKETS (-12)
#define OKV_E_UNKNOWN_TICKET (-13)
#define OKV_E_PENDING (-14)

/* Manager status codes used by the library for checks it makes before sending. */
#define OKV_S_BATCH_TOO_LARGE 6
#define OKV_S_KEY_TOO_LARGE 7
#define OKV_S_OUT_OF_RANGE 8
#define OKV_S_UNKNOWN_LEASE 15
#define OKV_S_NOT_ENABLED 18

/* Per-key statuses (KeyStatus of the schema). */
#define OKV_KEY_MISS 0
#define OKV_KEY_DRAM 1
#define OKV_KEY_SSD 2
#define OKV_KEY_STORED 3
#define OKV_KEY_ALREADY_RESIDENT 4
#define OKV_KEY_NO_SPACE 5
#define OKV_KEY_DESTINATION_TOO_SMALL 6
#define OKV_KEY_NOT_ATTEMPTED 7
#define OKV_KEY_PEER 8
#define OKV_KEY_FAILED 9
#define OKV_KEY_RESERVED 10

typedef struct okv_client okv_client;

typedef struct okv_options
{
    size_t size;                  /* sizeof(okv_options) */
    const char *dir;              /* Manager directory (holds cnc.dat); NULL: /dev/shm/orbitkv/default */
    const char *name;             /* client name, 1..128 ASCII; NULL: engine-<pid> */
    uint64_t data_region_bytes;   /* data region to ask for; 0: 64 MiB */
    int64_t attach_timeout_ms;    /* wait for a ready Manager and its answer; 0: 10 s */
    int64_t response_timeout_ms;  /* one request; 0: 10 s */
    int64_t heartbeat_interval_ms;/* 0: a fifth of the Manager's client liveness, at most 1 s */
    int heartbeat_thread;         /* 1 (default): a library thread heartbeats; 0: call okv_do_work */
    int64_t wait_yield_us;        /* a call waiting for the Manager yields this long before it sleeps; 0: 200 us;
                                     1..1000000 (added after the first version: older callers get the default) */
} okv_options;

/* Fill defaults. */
void okv_options_init(okv_options *options);

/* One key of a request: its hash and, for publish/read, its range of the data region. */
typedef struct okv_key
{
    const uint8_t *hash;
    uint32_t hash_length;         /* 1..64 */
    uint32_t length;              /* publish: block bytes; read: destination capacity; lookup: ignored */
    uint64_t offset;              /* publish: source offset; read: destination offset */
} okv_key;

/* What an engine knows of a published block, passed on in the Manager's KV events (BlockStored's parent_block_hash
 * and token_ids): the hash of the block before it in its chain and the tokens whose KV it holds. Either may be
 * absent (length/count 0). */
typedef struct okv_lineage
{
    const uint8_t *parent_hash;
    uint32_t parent_hash_length;  /* 0..64 */
    const int32_t *token_ids;
    uint32_t token_count;         /* 0..OKV_MAX_TOKENS_PER_BLOCK */
} okv_lineage;

/* A copy of a PEER key on another Manager: a Lookup with the peers flag lists up to 4 per key as a hint; a pinned
 * Lookup with the peers flag and a Read with it list exactly one per PEER key (the source held, or fetched from). */
typedef struct okv_candidate
{
    int32_t key_index;            /* the key it is a copy of: key_base + this answer's row */
    int32_t owner_index;          /* entry of this answer's owners */
    int64_t insertion_sequence;   /* the owner's insertion sequence of the block */
    int32_t length;               /* block bytes */
    uint8_t tier;                 /* the owner's tier: OKV_KEY_DRAM or OKV_KEY_SSD */
} okv_candidate;

/* A Manager the candidates of one answer name. */
typedef struct okv_owner
{
    int64_t runtime_uuid_msb;
    int64_t runtime_uuid_lsb;
    uint16_t node_id_length;
    char node_id[OKV_MAX_NODE_ID_LENGTH + 1]; /* NUL-terminated */
} okv_owner;

/* The answer to one request. Rows past key_count, candidate_count and owner_count are unspecified. */
typedef struct okv_result
{
    size_t size;                  /* sizeof(okv_result) */
    int32_t code;                 /* the Manager's status code (0 OK) */
    int32_t key_count;
    int64_t value;                /* publish: stored; lookup: prefix length; read: restored */
    int64_t lease_id;             /* pinned lookup: the lease; else 0 */
    uint8_t status[OKV_MAX_KEYS];
    uint8_t reason[OKV_MAX_KEYS];
    int32_t length[OKV_MAX_KEYS];
    int32_t candidate_count;      /* peer candidates in the answer (peers flag): rows of candidates */
    int32_t owner_count;          /* rows of owners */
    uint16_t message_length;
    char message[OKV_MAX_MESSAGE_LENGTH + 1];
    /* appended after the first release (a caller's shorter struct ends before them) */
    int32_t key_base;             /* chain calls: the chain index of this answer's row 0 (else 0) */
    int32_t dropped_candidates;   /* candidates naming a row or an owner the answer does not have, or over capacity */
    okv_candidate candidates[OKV_MAX_CANDIDATES];
    okv_owner owners[OKV_MAX_OWNERS];
    /* appended with zero-copy saves: a Prepare's answer, the pool offset of each RESERVED key's slot (-1: none) */
    int64_t pool_offset[OKV_MAX_KEYS];
} okv_result;

void okv_result_init(okv_result *result);

/* Text of a status (library or Manager); never NULL. Thread-safe. */
const char *okv_strerror(int status);

/* Attach / detach. okv_open: the caller owns *client until okv_close. */
int okv_open(const okv_options *options, okv_client **client);
/* Text of this thread's last failed okv_open (why: no Manager, permission denied, incompatible layout...), or ""
 * when it succeeded; valid until this thread's next okv_open. */
const char *okv_open_error(void);
/* Detach (when the Manager is alive), stop the heartbeat thread, unmap everything, free the handle. */
int okv_close(okv_client *client);

/* The mapped data region (valid until okv_close) and its size. */
void *okv_data_region(const okv_client *client);
uint64_t okv_data_region_bytes(const okv_client *client);
int64_t okv_client_id(const okv_client *client);
int32_t okv_max_keys_per_request(const okv_client *client);
/* The Manager's pool mapped read-write (valid until okv_close) and its size, when the Manager runs with
 * --engine-pool-access write-reserved; else NULL and 0. */
void *okv_pool(const okv_client *client);
uint64_t okv_pool_bytes(const okv_client *client);
/* Map every page of the pool into this process now (Linux 5.14+): a write into a slot otherwise takes a page fault
 * per 4 KiB the first time this process touches it, which on a VM costs more than the copy itself. Costs about a
 * microsecond per page once, and page tables of about 2 MiB per GiB of pool. */
int okv_pool_populate(okv_client *client);
/* Text of the last library failure of this client (thread-local to the handle, best effort). */
const char *okv_last_error(const okv_client *client);

/* Requests: one request each, at most okv_max_keys_per_request keys (longer chains: okv_*_chain below).
 * Thread-safe (serialised per client). */
int okv_publish(okv_client *client, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, okv_result *result);
int okv_lookup(okv_client *client, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int pin, int peers, okv_result *result);
/* Zero-copy saves (a Manager with --engine-pool-access write-reserved; else status OKV_S_NOT_ENABLED).
 * okv_prepare reserves a pool slot for each key not resident yet (keys[i].length: the block's bytes; offsets are
 * ignored): status OKV_KEY_RESERVED with result->pool_offset[i] (write the block at okv_pool() + that offset),
 * OKV_KEY_ALREADY_RESIDENT (no slot: skip it) or OKV_KEY_NO_SPACE. okv_commit seals the blocks written into this
 * client's slots (OKV_KEY_STORED; OKV_KEY_MISS without a reservation). A slot not committed within the client
 * liveness timeout, or when the client goes, is reclaimed and never becomes visible. */
int okv_prepare(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    okv_result *result);
int okv_commit(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    okv_result *result);
/* okv_publish with one lineage per key (lineage[i] belongs to keys[i]); it counts towards the request's bytes. */
int okv_publish_lineage(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    const okv_lineage *lineage, uint32_t key_count, okv_result *result);
/* lease_id 0: a plain read; else a lease of a pinned lookup, released when the read completes. */
int okv_read(okv_client *client, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int64_t lease_id, okv_result *result);
int okv_release(okv_client *client, int64_t lease_id, okv_result *result);
/* okv_lookup with the hashes packed back to back, all hash_length bytes long (no okv_key array to build: the
 * fast path of language bindings). */
int okv_lookup_packed(okv_client *client, const uint8_t *ns, uint32_t ns_length, const uint8_t *hashes,
    uint32_t hash_length, uint32_t key_count, int pin, int peers, okv_result *result);

/* Chains of any length: the keys are split into requests the way the Java EngineClient splits a KeyBatch (at most
 * okv_max_keys_per_request keys and the Manager's request bytes each, in order), and answer i lands in results[i]
 * (its key_base says where its rows start in the chain); *requests is set to the requests sent. Every key is checked
 * before the first request is written, and the chain must fit result_capacity requests (else BATCH_TOO_LARGE with
 * nothing sent). The return is OK or the first non-OK status (later requests are not sent).
 * - publish: every request is sent (a key answered NO_SPACE does not stop it); value of each = blocks stored.
 * - lookup: stops after the first request whose prefix is short (the chain's prefix is the sum of the values); a
 *   pinned chain holds one lease per request sent (results[i].lease_id, 0 where it pinned nothing).
 * - read: request i carries lease_ids[i] (lease_ids may be NULL, lease_count 0); stops after the first request that
 *   restored fewer than its keys; the leases of requests never sent are released before it returns. */
int okv_publish_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, okv_result *results, uint32_t result_capacity, uint32_t *requests);
int okv_lookup_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int pin, int peers, okv_result *results, uint32_t result_capacity, uint32_t *requests);
/* okv_lookup_chain with equal-length hashes back to back. */
int okv_lookup_packed_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const uint8_t *hashes,
    uint32_t hash_length, uint32_t key_count, int pin, int peers, okv_result *results, uint32_t result_capacity,
    uint32_t *requests);
int okv_read_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, const int64_t *lease_ids, uint32_t lease_count, okv_result *results, uint32_t result_capacity,
    uint32_t *requests);
/* Requests a chain of key_count keys takes (0 for bad input). */
int32_t okv_chain_requests(const okv_client *client, uint32_t ns_length, const okv_key *keys, uint32_t key_count);

/* Asynchronous lookups and reads: submit returns a ticket (>= 1) in *ticket; poll returns OKV_E_PENDING
 * until the answer is in, then its status and fills result; wait blocks up to timeout_ms. At most
 * OKV_MAX_TICKETS outstanding per client; keys and ns are copied at submit. Thread-safe. */
int okv_submit_lookup(okv_client *client, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int pin, int peers, int64_t *ticket);
int okv_submit_read(okv_client *client, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int64_t lease_id, int64_t *ticket);
/* A publish as a ticket: the blocks' ranges must not be written until the ticket completes. */
int okv_submit_publish(okv_client *client, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int64_t *ticket);
/* okv_commit as a ticket: commit each block as soon as it is written, so that the Manager sums it while the next is
 * being written. */
int okv_submit_commit(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int64_t *ticket);
int okv_submit_publish_lineage(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    const okv_lineage *lineage, uint32_t key_count, int64_t *ticket);
int okv_poll(okv_client *client, int64_t ticket, okv_result *result);
int okv_wait(okv_client *client, int64_t ticket, int64_t timeout_ms, okv_result *result);

/* Heartbeats without the thread: call from the engine's loop; sends one when due. Returns 1 if sent. */
int okv_do_work(okv_client *client);

/* The canonical bytes of an engine's integer block hash: 8 bytes, little-endian (same in Java and Python). */
void okv_hash_from_u64(uint64_t hash, uint8_t out[8]);

/* StateKey identity, as the Manager computes it (codecs: StateKey, StateKeyShard). */
#define OKV_STATE_KEY_SHARD_COUNT 16
/* Canonical bytes u16le(ns_length) || ns || u8(hash_length) || hash into out (capacity bytes); returns the
 * length written, or OKV_E_INVALID_ARGUMENT (lengths outside 1..256 / 1..64, or it does not fit). */
int okv_state_key_encode(const uint8_t *ns, uint32_t ns_length, const uint8_t *hash, uint32_t hash_length,
    uint8_t *out, size_t capacity);
/* SHA-256 over the shard domain tag, a zero byte and the canonical bytes, into digest; returns 0 or a status. */
int okv_state_key_digest(const uint8_t *ns, uint32_t ns_length, const uint8_t *hash, uint32_t hash_length,
    uint8_t digest[32]);
/* The key's logical shard 0..15 (first 8 digest bytes big-endian mod 16), or a negative status. */
int okv_state_key_shard(const uint8_t *ns, uint32_t ns_length, const uint8_t *hash, uint32_t hash_length);

#ifdef __cplusplus
}
#endif

#endif
