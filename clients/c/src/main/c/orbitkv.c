/*
 * The OrbitKV C client: CnC mapping and checks, client slot claim, the Agrona ring buffers (many-to-one request
 * ring as a producer, one-to-one response ring as the consumer) with the Java side's memory ordering, the
 * doorbell, heartbeats, and requests encoded and answers decoded by the SBE-generated C codecs.
 */
#define _GNU_SOURCE
#include "orbitkv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io_orbitkv_codecs_engine/messageHeader.h"
#include "io_orbitkv_codecs_engine/attachRequest.h"
#include "io_orbitkv_codecs_engine/detachRequest.h"
#include "io_orbitkv_codecs_engine/heartbeatRequest.h"
#include "io_orbitkv_codecs_engine/publishRequest.h"
#include "io_orbitkv_codecs_engine/lookupRequest.h"
#include "io_orbitkv_codecs_engine/readRequest.h"
#include "io_orbitkv_codecs_engine/releaseRequest.h"
#include "io_orbitkv_codecs_engine/prepareRequest.h"
#include "io_orbitkv_codecs_engine/commitRequest.h"
#include "io_orbitkv_codecs_engine/response.h"

#define SBE(x) io_orbitkv_codecs_engine_##x

/* CnC layout (codecs: CncFileDescriptor), layout version 2. */
#define CNC_LAYOUT_VERSION 2
#define CNC_HEADER_LENGTH 4096
#define CNC_SECTION_ALIGNMENT 4096
#define CNC_SLOT_LENGTH 64
#define CNC_LAYOUT_VERSION_OFFSET 0
#define CNC_MANAGER_PID_OFFSET 8
#define CNC_CLIENT_LIVENESS_NS_OFFSET 40
#define CNC_REQUEST_RING_LENGTH_OFFSET 48
#define CNC_MAX_CLIENTS_OFFSET 52
#define CNC_RESPONSE_RING_LENGTH_OFFSET 56
#define CNC_COUNTERS_METADATA_LENGTH_OFFSET 60
#define CNC_COUNTERS_VALUES_LENGTH_OFFSET 64
#define CNC_ERROR_LOG_LENGTH_OFFSET 68
#define CNC_MAX_KEYS_PER_REQUEST_OFFSET 72
#define CNC_MAX_REQUEST_BYTES_OFFSET 76
#define CNC_POOL_BYTES_OFFSET 88
#define CNC_POOL_ACCESS_OFFSET 96
#define CNC_POOL_ACCESS_WRITE_RESERVED 1
#define CNC_AGENT_STATE_OFFSET 128
#define CNC_AGENT_SLEEPING 1
#define CNC_AGENT_RUNG 2
#define SLOT_CLAIM_PID_OFFSET 0
#define SLOT_CLAIM_TIME_MS_OFFSET 8
#define SLOT_STATE_OFFSET 20
#define SLOT_CLIENT_ID_OFFSET 24
#define SLOT_FREE 0
#define SLOT_CLAIMED 1
#define SLOT_ATTACHED 2

/* Agrona ring buffer layout (RingBufferDescriptor, RecordDescriptor of Agrona 2.x). */
#define RB_TAIL_POSITION_OFFSET 128
#define RB_HEAD_CACHE_POSITION_OFFSET 256
#define RB_HEAD_POSITION_OFFSET 384
#define RB_CORRELATION_COUNTER_OFFSET 512
#define RB_CONSUMER_HEARTBEAT_OFFSET 640
#define RB_TRAILER_LENGTH 768
#define RB_RECORD_HEADER_LENGTH 8
#define RB_ALIGNMENT 8
#define RB_PADDING_MSG_TYPE_ID (-1)
#define RB_INSUFFICIENT_CAPACITY (-2)

#define MIN_MANAGER_TIMEOUT_MS 1000
#define MAX_REQUEST_BYTES 65536
#define RESPONSE_BUFFER_BYTES 16384
#define RESPONSE_READ_LIMIT 16
/* Request bytes besides the namespace and the keys, and per key besides its hash: upper bounds for every request
 * type, used both to refuse a request and to split a chain (so every split request passes the check). */
#define REQUEST_FIXED_BYTES 64
#define REQUEST_KEY_BYTES 16
#define DEFAULT_DATA_REGION_BYTES (64ULL * 1024 * 1024)
#define DEFAULT_TIMEOUT_MS 10000
/* How long a wait for the Manager yields before it sleeps: covers the wake-up of a Manager found asleep (tens of
 * microseconds on a VM) so that the answer is not left waiting for one of the waiter's own sleeps. */
#define DEFAULT_WAIT_YIELD_US 200
#define MAX_WAIT_YIELD_US 1000000
/* Pending answers: the tickets plus synchronous calls of up to 24 threads waiting at once. */
#define PENDING_CAPACITY (OKV_MAX_TICKETS + 24)

typedef struct ring
{
    uint8_t *buffer;
    int32_t capacity;
} ring;

typedef struct pending
{
    int in_use;
    int done;
    int is_ticket;
    int64_t correlation_id;
    int64_t ticket;
    int32_t key_count;
    int32_t key_base;
    okv_result result;
} pending;

struct okv_client
{
    uint8_t *cnc;
    size_t cnc_length;
    ring request_ring;
    ring response_ring;
    uint8_t *slot;
    int32_t slot_index;
    int doorbell_fd;
    int64_t pid;
    int64_t client_id;
    int64_t client_liveness_ms;
    int64_t manager_timeout_ms;
    int32_t max_keys;
    int32_t max_request_bytes;
    int64_t response_timeout_ms;
    int64_t heartbeat_interval_ms;
    int64_t wait_yield_ns;
    uint8_t *data_region;
    uint64_t data_region_bytes;
    uint8_t *pool;
    uint64_t pool_bytes;
    int attached;
    pthread_mutex_t lock;
    uint8_t send_buffer[MAX_REQUEST_BYTES];
    uint8_t response_copy[RESPONSE_BUFFER_BYTES];
    pending pendings[PENDING_CAPACITY];
    int64_t next_ticket;
    int64_t last_heartbeat_ms;
    int heartbeat_running;
    int heartbeat_stop;
    pthread_t heartbeat_thread;
    pthread_mutex_t heartbeat_lock;
    pthread_cond_t heartbeat_cond;
    int64_t doorbell_rings;
    int64_t failed_rings;
    char last_error[256];
};

/* ------------------------------------------------------------------------------------------------------------ */
/* Time and idling */

static int64_t epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Back off while waiting for the Manager: spin 100 times, yield at least 100 times and for the client's yield window
 * (wait_yield_ns, counted from the first yield), then sleep doubling from 1 us to 100 us. A sleep costs its timer
 * slack (~50 us) on top of its length, so the window covers the usual answer, including one from a Manager that had
 * to be woken; waits longer than that (big copies, a busy Manager) sleep. The Java client waits the same way
 * (ResponseWaitIdleStrategy). */
typedef struct idler
{
    int32_t spins;
    int32_t yields;
    int64_t park_ns;
    int64_t yield_ns;
    int64_t yield_until_ns;
} idler;

static void idler_reset(idler *idle, int64_t yield_ns)
{
    idle->spins = 0;
    idle->yields = 0;
    idle->park_ns = 1000;
    idle->yield_ns = yield_ns;
    idle->yield_until_ns = 0;
}

static void idler_idle(idler *idle)
{
    if (idle->spins < 100)
    {
        idle->spins++;
        __builtin_ia32_pause();
        return;
    }
    if (idle->yields == 0)
    {
        idle->yield_until_ns = mono_ns() + idle->yield_ns;
    }
    if (idle->yields < 100 || (idle->yield_ns > 0 && mono_ns() < idle->yield_until_ns))
    {
        idle->yields++;
        sched_yield();
        return;
    }
    struct timespec ts = { 0, idle->park_ns };
    nanosleep(&ts, NULL);
    idle->park_ns = idle->park_ns * 2 > 100000 ? 100000 : idle->park_ns * 2;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Atomics on the shared mapping: the Java side's getXxxVolatile/putXxxRelease/compareAndSet */

static int32_t load_i32_acquire(const uint8_t *p)
{
    return __atomic_load_n((const int32_t *)p, __ATOMIC_ACQUIRE);
}

static int64_t load_i64_acquire(const uint8_t *p)
{
    return __atomic_load_n((const int64_t *)p, __ATOMIC_ACQUIRE);
}

static int64_t load_i64_plain(const uint8_t *p)
{
    return __atomic_load_n((const int64_t *)p, __ATOMIC_RELAXED);
}

static void store_i32_release(uint8_t *p, int32_t v)
{
    __atomic_store_n((int32_t *)p, v, __ATOMIC_RELEASE);
}

static void store_i64_release(uint8_t *p, int64_t v)
{
    __atomic_store_n((int64_t *)p, v, __ATOMIC_RELEASE);
}

static int cas_i64(uint8_t *p, int64_t expected, int64_t desired)
{
    return __atomic_compare_exchange_n((int64_t *)p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static int cas_i32(uint8_t *p, int32_t expected, int32_t desired)
{
    return __atomic_compare_exchange_n((int32_t *)p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static int32_t read_i32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static int64_t read_i64(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static int32_t align_up(int32_t value, int32_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

static int64_t align_section(int64_t length)
{
    return (length + CNC_SECTION_ALIGNMENT - 1) & ~((int64_t)CNC_SECTION_ALIGNMENT - 1);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Agrona ring buffers */

static uint8_t *trailer(const ring *r, int32_t offset)
{
    return r->buffer + r->capacity + offset;
}

static int64_t ring_next_correlation_id(const ring *r)
{
    return __atomic_fetch_add((int64_t *)trailer(r, RB_CORRELATION_COUNTER_OFFSET), 1, __ATOMIC_SEQ_CST);
}

static int64_t ring_consumer_heartbeat(const ring *r)
{
    return load_i64_acquire(trailer(r, RB_CONSUMER_HEARTBEAT_OFFSET));
}

static int32_t ring_max_msg_length(const ring *r)
{
    return r->capacity / 8;
}

/* ManyToOneRingBuffer.claimCapacity: index of the claimed record, or RB_INSUFFICIENT_CAPACITY. */
static int32_t mpsc_claim(ring *r, int32_t record_length)
{
    const int32_t required = align_up(record_length, RB_ALIGNMENT);
    const int32_t capacity = r->capacity;
    const int32_t mask = capacity - 1;
    uint8_t *tail_p = trailer(r, RB_TAIL_POSITION_OFFSET);
    uint8_t *head_cache_p = trailer(r, RB_HEAD_CACHE_POSITION_OFFSET);
    uint8_t *head_p = trailer(r, RB_HEAD_POSITION_OFFSET);
    int64_t head = load_i64_acquire(head_cache_p);
    int64_t tail;
    int32_t tail_index;
    int32_t padding;
    do
    {
        tail = load_i64_acquire(tail_p);
        const int32_t available = capacity - (int32_t)(tail - head);
        if (required > available)
        {
            head = load_i64_acquire(head_p);
            if (required > capacity - (int32_t)(tail - head))
            {
                return RB_INSUFFICIENT_CAPACITY;
            }
            store_i64_release(head_cache_p, head);
        }
        padding = 0;
        tail_index = (int32_t)tail & mask;
        const int32_t to_end = capacity - tail_index;
        if (required > to_end)
        {
            int32_t head_index = (int32_t)head & mask;
            if (required > head_index)
            {
                head = load_i64_acquire(head_p);
                head_index = (int32_t)head & mask;
                if (required > head_index)
                {
                    return RB_INSUFFICIENT_CAPACITY;
                }
                store_i64_release(head_cache_p, head);
            }
            padding = to_end;
        }
    }
    while (!cas_i64(tail_p, tail, tail + required + padding));

    if (0 != padding)
    {
        store_i32_release(r->buffer + tail_index, -padding);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        const int32_t type = RB_PADDING_MSG_TYPE_ID;
        memcpy(r->buffer + tail_index + 4, &type, sizeof(type));
        store_i32_release(r->buffer + tail_index, padding);
        tail_index = 0;
    }
    return tail_index;
}

/* ManyToOneRingBuffer.write. */
static int mpsc_write(ring *r, int32_t type_id, const uint8_t *src, int32_t length)
{
    if (length > ring_max_msg_length(r) || type_id < 1)
    {
        return 0;
    }
    const int32_t record_length = length + RB_RECORD_HEADER_LENGTH;
    const int32_t index = mpsc_claim(r, record_length);
    if (RB_INSUFFICIENT_CAPACITY == index)
    {
        return 0;
    }
    store_i32_release(r->buffer + index, -record_length);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(r->buffer + index + RB_RECORD_HEADER_LENGTH, src, (size_t)length);
    memcpy(r->buffer + index + 4, &type_id, sizeof(type_id));
    store_i32_release(r->buffer + index, record_length);
    return 1;
}

typedef void (*message_handler)(okv_client *client, const uint8_t *msg, int32_t length);

/* OneToOneRingBuffer.read as the one consumer: the producer zeroes ahead, the consumer only moves head. */
static int spsc_read(okv_client *client, ring *r, message_handler handler, int limit)
{
    uint8_t *head_p = trailer(r, RB_HEAD_POSITION_OFFSET);
    const int64_t head = load_i64_plain(head_p);
    const int32_t capacity = r->capacity;
    const int32_t head_index = (int32_t)head & (capacity - 1);
    const int32_t contiguous = capacity - head_index;
    int32_t bytes_read = 0;
    int messages = 0;
    while (bytes_read < contiguous && messages < limit)
    {
        const int32_t record_index = head_index + bytes_read;
        const int32_t record_length = load_i32_acquire(r->buffer + record_index);
        if (record_length <= 0)
        {
            break;
        }
        bytes_read += align_up(record_length, RB_ALIGNMENT);
        const int32_t type_id = read_i32(r->buffer + record_index + 4);
        if (RB_PADDING_MSG_TYPE_ID == type_id)
        {
            continue;
        }
        messages++;
        handler(client, r->buffer + record_index + RB_RECORD_HEADER_LENGTH, record_length - RB_RECORD_HEADER_LENGTH);
    }
    if (bytes_read > 0)
    {
        store_i64_release(head_p, head + bytes_read);
    }
    return bytes_read;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Status text */

const char *okv_strerror(int status)
{
    switch (status)
    {
        case OKV_OK: return "OK";
        case 1: return "ERROR: internal error in the Manager";
        case 2: return "MALFORMED: frame could not be decoded or fails validation";
        case 3: return "UNKNOWN_TEMPLATE";
        case 4: return "SCHEMA_MISMATCH: wrong schema id or unsupported version";
        case 5: return "UNKNOWN_CLIENT: client not attached (or stale generation)";
        case 6: return "BATCH_TOO_LARGE: more keys or bytes than one request takes";
        case 7: return "KEY_TOO_LARGE: namespace 1..256 bytes, hash 1..64 bytes";
        case 8: return "OUT_OF_RANGE: offset/length outside the data region";
        case 9: return "NO_SPACE: pool full and nothing evictable";
        case 10: return "NAME_IN_USE: another attached client has this name";
        case 11: return "BAD_FLAGS: unknown flag bits";
        case 12: return "TOO_MANY_CLIENTS: no free client slot";
        case 13: return "PIN_LIMIT: too many pinned leases or blocks";
        case 14: return "BAD_DATA_REGION_SIZE: data region zero or over the Manager's limit";
        case 15: return "UNKNOWN_LEASE: lease not held by this client";
        case 16: return "NAMESPACE_LIMIT: the Manager tracks its maximum of namespaces";
        case 17: return "BUSY: too many requests in flight for this client";
        case 18: return "NOT_ENABLED: the Manager runs without --engine-pool-access write-reserved";
        case OKV_E_INVALID_ARGUMENT: return "invalid argument";
        case OKV_E_NO_MANAGER: return "no ready Manager in the directory";
        case OKV_E_INCOMPATIBLE_LAYOUT: return "CnC file has a layout version this library does not understand";
        case OKV_E_STALE_MANAGER: return "the Manager's heartbeat is stale";
        case OKV_E_NO_FREE_SLOT: return "all client slots are claimed";
        case OKV_E_TIMEOUT: return "no answer within the response timeout";
        case OKV_E_MANAGER_DIED: return "the Manager died (heartbeat stale)";
        case OKV_E_DETACHED: return "the Manager detached this client";
        case OKV_E_CLOSED: return "client closed or no longer attached";
        case OKV_E_SYSTEM: return "system call failed (see okv_last_error)";
        case OKV_E_PROTOCOL: return "answer could not be decoded";
        case OKV_E_TOO_MANY_TICKETS: return "too many outstanding tickets";
        case OKV_E_UNKNOWN_TICKET: return "unknown ticket";
        case OKV_E_PENDING: return "answer not in yet";
        default: return "unknown status";
    }
}

static int fail(okv_client *client, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#include <stdarg.h>

static int fail(okv_client *client, int status, const char *fmt, ...)
{
    if (client != NULL)
    {
        va_list args;
        va_start(args, fmt);
        vsnprintf(client->last_error, sizeof(client->last_error), fmt, args);
        va_end(args);
    }
    return status;
}

static _Thread_local char open_error[256];

const char *okv_open_error(void)
{
    return open_error;
}

const char *okv_last_error(const okv_client *client)
{
    return client == NULL ? "" : client->last_error;
}

void okv_options_init(okv_options *options)
{
    memset(options, 0, sizeof(*options));
    options->size = sizeof(*options);
    options->heartbeat_thread = 1;
}

void okv_result_init(okv_result *result)
{
    memset(result, 0, sizeof(*result));
    result->size = sizeof(*result);
}

void okv_hash_from_u64(uint64_t hash, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
    {
        out[i] = (uint8_t)(hash >> (8 * i));
    }
}

void *okv_pool(const okv_client *client)
{
    return client == NULL ? NULL : client->pool;
}

uint64_t okv_pool_bytes(const okv_client *client)
{
    return client == NULL ? 0 : client->pool_bytes;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int okv_pool_populate(okv_client *client)
{
    if (client == NULL || client->pool == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    /* page-table entries for the whole pool now, so that writes into slots later take no page faults */
    if (madvise(client->pool, client->pool_bytes, MADV_POPULATE_WRITE) != 0)
    {
        return fail(client, OKV_E_SYSTEM, "madvise(MADV_POPULATE_WRITE) of the pool: %s", strerror(errno));
    }
    return OKV_OK;
}

void *okv_data_region(const okv_client *client)
{
    return client == NULL ? NULL : client->data_region;
}

uint64_t okv_data_region_bytes(const okv_client *client)
{
    return client == NULL ? 0 : client->data_region_bytes;
}

int64_t okv_client_id(const okv_client *client)
{
    return client == NULL ? 0 : client->client_id;
}

int32_t okv_max_keys_per_request(const okv_client *client)
{
    return client == NULL ? 0 : client->max_keys;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Liveness, slot, doorbell */

static int manager_alive(const okv_client *client)
{
    return epoch_ms() - ring_consumer_heartbeat(&client->request_ring) <= client->manager_timeout_ms;
}

static int owns_slot(const okv_client *client)
{
    return load_i64_acquire(client->slot + SLOT_CLIENT_ID_OFFSET) == client->client_id &&
        SLOT_ATTACHED == load_i32_acquire(client->slot + SLOT_STATE_OFFSET);
}

static void ring_doorbell_if_sleeping(okv_client *client)
{
    /* Dekker with the Manager: the request's commit, a full fence, then the load of its state. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint8_t *state = client->cnc + CNC_AGENT_STATE_OFFSET;
    if (CNC_AGENT_SLEEPING != load_i32_acquire(state) || !cas_i32(state, CNC_AGENT_SLEEPING, CNC_AGENT_RUNG))
    {
        return;
    }
    const uint8_t one = 1;
    if (write(client->doorbell_fd, &one, 1) == 1)
    {
        __atomic_fetch_add(&client->doorbell_rings, 1, __ATOMIC_RELAXED);
    }
    else
    {
        __atomic_fetch_add(&client->failed_rings, 1, __ATOMIC_RELAXED);
    }
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Answers */

static pending *find_pending(okv_client *client, int64_t correlation_id)
{
    for (int i = 0; i < PENDING_CAPACITY; i++)
    {
        if (client->pendings[i].in_use && !client->pendings[i].done &&
            client->pendings[i].correlation_id == correlation_id)
        {
            return &client->pendings[i];
        }
    }
    return NULL;
}

static void on_response(okv_client *client, const uint8_t *msg, int32_t length)
{
    if (length < (int32_t)SBE(messageHeader_encoded_length)() || length > RESPONSE_BUFFER_BYTES)
    {
        return;
    }
    /* the codecs take a mutable buffer: decode from a private copy, never from the shared ring */
    memcpy(client->response_copy, msg, (size_t)length);
    char *buf = (char *)client->response_copy;
    struct SBE(messageHeader) hdr;
    if (!SBE(messageHeader_wrap)(&hdr, buf, 0, SBE(messageHeader_sbe_schema_version)(), (uint64_t)length) ||
        SBE(messageHeader_schemaId)(&hdr) != SBE(response_sbe_schema_id)() ||
        SBE(messageHeader_templateId)(&hdr) != SBE(response_sbe_template_id)())
    {
        return;
    }
    struct SBE(response) response;
    if (!SBE(response_wrap_for_decode)(&response, buf, SBE(messageHeader_encoded_length)(),
        SBE(messageHeader_blockLength)(&hdr), SBE(messageHeader_version)(&hdr), (uint64_t)length))
    {
        return;
    }
    pending *p = find_pending(client, SBE(response_correlationId)(&response));
    if (p == NULL)
    {
        return;
    }
    okv_result *result = &p->result;
    /* the header fields only: rows past the counts are unspecified, so the 19 KiB struct is not cleared per answer */
    result->size = sizeof(*result);
    result->key_count = 0;
    result->candidate_count = 0;
    result->owner_count = 0;
    result->message_length = 0;
    result->message[0] = '\0';
    result->key_base = p->key_base;
    result->dropped_candidates = 0;
    enum SBE(statusCode) code;
    result->code = SBE(response_code)(&response, &code) ? (int32_t)code : OKV_E_PROTOCOL;
    result->value = SBE(response_value)(&response);
    result->lease_id = SBE(response_leaseId)(&response);
    struct SBE(response_keys) keys;
    if (!SBE(response_get_keys)(&response, &keys))
    {
        result->code = OKV_E_PROTOCOL;
        p->done = 1;
        return;
    }
    const uint64_t count = SBE(response_keys_count)(&keys);
    for (uint64_t i = 0; i < count; i++)
    {
        if (!SBE(response_keys_next)(&keys))
        {
            result->code = OKV_E_PROTOCOL;
            p->done = 1;
            return;
        }
        if ((int32_t)i < p->key_count && i < OKV_MAX_KEYS)
        {
            enum SBE(keyStatus) status;
            enum SBE(failureReason) reason;
            result->status[i] = SBE(response_keys_status)(&keys, &status) ? (uint8_t)status : 0xff;
            result->reason[i] = SBE(response_keys_reason)(&keys, &reason) ? (uint8_t)reason : 0;
            result->length[i] = SBE(response_keys_length)(&keys);
        }
    }
    result->key_count = p->key_count < (int32_t)count ? p->key_count : (int32_t)count;
    /* groups of schema version 2 exist only in frames of that version or later (the generated C decoder does not
     * check sinceVersion for groups) */
    for (int32_t i = 0; i < result->key_count; i++)
    {
        result->pool_offset[i] = -1;
    }
    if (SBE(response_acting_version)(&response) >= 2)
    {
        struct SBE(response_owners) owners;
        if (!SBE(response_get_owners)(&response, &owners))
        {
            result->code = OKV_E_PROTOCOL;
            p->done = 1;
            return;
        }
        const uint64_t owner_count = SBE(response_owners_count)(&owners);
        for (uint64_t i = 0; i < owner_count; i++)
        {
            if (!SBE(response_owners_next)(&owners))
            {
                result->code = OKV_E_PROTOCOL;
                p->done = 1;
                return;
            }
            char node[OKV_MAX_MESSAGE_LENGTH];
            if (i < OKV_MAX_OWNERS)
            {
                okv_owner *owner = &result->owners[i];
                owner->runtime_uuid_msb = SBE(response_owners_runtimeUuidMsb)(&owners);
                owner->runtime_uuid_lsb = SBE(response_owners_runtimeUuidLsb)(&owners);
                const uint64_t length = SBE(response_owners_get_nodeId)(&owners, node, sizeof(node));
                owner->node_id_length = (uint16_t)(length < OKV_MAX_NODE_ID_LENGTH ? length : OKV_MAX_NODE_ID_LENGTH);
                memcpy(owner->node_id, node, owner->node_id_length);
                owner->node_id[owner->node_id_length] = '\0';
            }
            else
            {
                SBE(response_owners_get_nodeId)(&owners, node, sizeof(node));
            }
        }
        result->owner_count = (int32_t)(owner_count < OKV_MAX_OWNERS ? owner_count : OKV_MAX_OWNERS);
        struct SBE(response_candidates) candidates;
        if (!SBE(response_get_candidates)(&response, &candidates))
        {
            result->code = OKV_E_PROTOCOL;
            p->done = 1;
            return;
        }
        const uint64_t candidate_count = SBE(response_candidates_count)(&candidates);
        int32_t kept = 0;
        for (uint64_t i = 0; i < candidate_count; i++)
        {
            if (!SBE(response_candidates_next)(&candidates))
            {
                result->code = OKV_E_PROTOCOL;
                p->done = 1;
                return;
            }
            const int32_t row = SBE(response_candidates_keyIndex)(&candidates);
            const int32_t owner = SBE(response_candidates_ownerIndex)(&candidates);
            /* as the Java client: a candidate naming a row or an owner this answer lacks (or over capacity) is dropped */
            if (row >= result->key_count || owner >= result->owner_count || kept == OKV_MAX_CANDIDATES)
            {
                result->dropped_candidates++;
                continue;
            }
            okv_candidate *candidate = &result->candidates[kept++];
            enum SBE(keyStatus) tier;
            candidate->key_index = p->key_base + row;
            candidate->owner_index = owner;
            candidate->tier = SBE(response_candidates_tier)(&candidates, &tier) ? (uint8_t)tier : 0xff;
            candidate->insertion_sequence = SBE(response_candidates_insertionSequence)(&candidates);
            candidate->length = SBE(response_candidates_length)(&candidates);
        }
        result->candidate_count = kept;
    }
    /* the slots group (a Prepare's answer) exists only in frames of version 4 or later */
    if (SBE(response_acting_version)(&response) >= 4)
    {
        struct SBE(response_slots) slots;
        if (!SBE(response_get_slots)(&response, &slots))
        {
            result->code = OKV_E_PROTOCOL;
            p->done = 1;
            return;
        }
        const uint64_t slot_count = SBE(response_slots_count)(&slots);
        for (uint64_t i = 0; i < slot_count; i++)
        {
            if (!SBE(response_slots_next)(&slots))
            {
                result->code = OKV_E_PROTOCOL;
                p->done = 1;
                return;
            }
            if ((int32_t)i < result->key_count)
            {
                result->pool_offset[i] = SBE(response_slots_poolOffset)(&slots);
            }
        }
    }
    result->message_length = (uint16_t)SBE(response_get_message)(&response, result->message, OKV_MAX_MESSAGE_LENGTH);
    result->message[result->message_length] = '\0';
    p->done = 1;
}

static pending *claim_pending(okv_client *client, int is_ticket)
{
    int tickets = 0;
    for (int i = 0; i < PENDING_CAPACITY; i++)
    {
        if (client->pendings[i].in_use && client->pendings[i].is_ticket)
        {
            tickets++;
        }
    }
    if (is_ticket && tickets >= OKV_MAX_TICKETS)
    {
        return NULL;
    }
    for (int i = 0; i < PENDING_CAPACITY; i++)
    {
        if (!client->pendings[i].in_use)
        {
            pending *p = &client->pendings[i];
            memset(p, 0, offsetof(pending, result));
            p->in_use = 1;
            p->is_ticket = is_ticket;
            return p;
        }
    }
    return NULL;
}

static int check_wait(okv_client *client, int64_t deadline_ns, int check_slot, const char *what)
{
    if (check_slot && client->attached && !owns_slot(client))
    {
        client->attached = 0;
        return fail(client, OKV_E_DETACHED, "slot %d no longer holds client %lld", client->slot_index,
            (long long)client->client_id);
    }
    if (!manager_alive(client))
    {
        client->attached = 0;
        return fail(client, OKV_E_MANAGER_DIED, "Manager heartbeat older than %lld ms",
            (long long)client->manager_timeout_ms);
    }
    if (mono_ns() - deadline_ns > 0)
    {
        return fail(client, OKV_E_TIMEOUT, "%s within %lld ms", what, (long long)client->response_timeout_ms);
    }
    return OKV_OK;
}

/* Commit the encoded request in send_buffer; the caller holds the lock. */
static int send_locked(okv_client *client, int32_t template_id, int32_t length, int check_slot, int64_t deadline_ns)
{
    idler idle;
    idler_reset(&idle, client->wait_yield_ns);
    while (!mpsc_write(&client->request_ring, template_id, client->send_buffer, length))
    {
        if (length > ring_max_msg_length(&client->request_ring))
        {
            return fail(client, OKV_S_BATCH_TOO_LARGE, "request of %d bytes over the ring's limit", length);
        }
        const int status = check_wait(client, deadline_ns, check_slot, "request ring full");
        if (status != OKV_OK)
        {
            return status;
        }
        pthread_mutex_unlock(&client->lock);
        idler_idle(&idle);
        pthread_mutex_lock(&client->lock);
    }
    ring_doorbell_if_sleeping(client);
    return OKV_OK;
}

/* Copy an answer out: at most the caller's result->size bytes (a caller built against an older, shorter okv_result),
 * the whole struct when size is 0 or larger than this library's. */
static void copy_part(okv_result *dst, const okv_result *src, size_t offset, size_t length, size_t size)
{
    if (offset < size)
    {
        memcpy((uint8_t *)dst + offset, (const uint8_t *)src + offset, length < size - offset ? length : size - offset);
    }
}

/* Only the parts in use (the rows up to the counts, the message up to its length): the struct is 19 KiB. */
static void copy_result(okv_result *dst, const okv_result *src)
{
    const size_t size = dst->size > 0 && dst->size < sizeof(okv_result) ? dst->size : sizeof(okv_result);
    const size_t rows = src->key_count > 0 ? (size_t)src->key_count : 0;
    copy_part(dst, src, 0, offsetof(okv_result, status), size);
    copy_part(dst, src, offsetof(okv_result, status), rows, size);
    copy_part(dst, src, offsetof(okv_result, reason), rows, size);
    copy_part(dst, src, offsetof(okv_result, length), rows * sizeof(int32_t), size);
    copy_part(dst, src, offsetof(okv_result, candidate_count),
        offsetof(okv_result, message) - offsetof(okv_result, candidate_count) + src->message_length + 1, size);
    copy_part(dst, src, offsetof(okv_result, key_base), offsetof(okv_result, candidates) - offsetof(okv_result, key_base),
        size);
    copy_part(dst, src, offsetof(okv_result, candidates), (size_t)src->candidate_count * sizeof(okv_candidate), size);
    copy_part(dst, src, offsetof(okv_result, owners), (size_t)src->owner_count * sizeof(okv_owner), size);
    copy_part(dst, src, offsetof(okv_result, pool_offset), rows * sizeof(int64_t), size);
    dst->size = size;
}

static void init_result_for(okv_result *dst, int code)
{
    okv_result fresh;
    okv_result_init(&fresh);
    fresh.code = code;
    copy_result(dst, &fresh);
}

/* Wait for p's answer; the caller holds the lock. Frees p unless the answer is still missing for a ticket. */
static int await_locked(okv_client *client, pending *p, int64_t deadline_ns, int check_slot, okv_result *result)
{
    idler idle;
    idler_reset(&idle, client->wait_yield_ns);
    while (!p->done)
    {
        const int read = spsc_read(client, &client->response_ring, on_response, RESPONSE_READ_LIMIT);
        if (p->done)
        {
            break;
        }
        if (read == 0)
        {
            const int status = check_wait(client, deadline_ns, check_slot, "no response");
            if (status != OKV_OK)
            {
                if (!p->is_ticket || status != OKV_E_TIMEOUT)
                {
                    p->in_use = 0;
                }
                return status;
            }
            pthread_mutex_unlock(&client->lock);
            idler_idle(&idle);
            pthread_mutex_lock(&client->lock);
        }
        else
        {
            idler_reset(&idle, client->wait_yield_ns);
        }
    }
    if (result != NULL)
    {
        copy_result(result, &p->result);
    }
    const int code = p->result.code;
    p->in_use = 0;
    return code;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Encoding */

static int check_keys(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int ranges, const okv_lineage *lineage)
{
    if (keys == NULL || (ns == NULL && ns_length > 0))
    {
        return fail(client, OKV_E_INVALID_ARGUMENT, "keys or namespace NULL");
    }
    if (key_count < 1 || key_count > (uint32_t)client->max_keys)
    {
        return fail(client, OKV_S_BATCH_TOO_LARGE, "%u keys, one request takes 1..%d", key_count, client->max_keys);
    }
    if (ns_length < 1 || ns_length > OKV_MAX_NAMESPACE_LENGTH)
    {
        return fail(client, OKV_S_KEY_TOO_LARGE, "namespace of %u bytes, 1..%d allowed", ns_length,
            OKV_MAX_NAMESPACE_LENGTH);
    }
    int64_t bytes = REQUEST_FIXED_BYTES + ns_length;
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (keys[i].hash == NULL || keys[i].hash_length < 1 || keys[i].hash_length > OKV_MAX_HASH_LENGTH)
        {
            return fail(client, OKV_S_KEY_TOO_LARGE, "key %u: hash of %u bytes, 1..%d allowed", i, keys[i].hash_length,
                OKV_MAX_HASH_LENGTH);
        }
        if (ranges && (keys[i].offset > client->data_region_bytes ||
            (uint64_t)keys[i].length > client->data_region_bytes - keys[i].offset || keys[i].length > INT32_MAX))
        {
            return fail(client, OKV_S_OUT_OF_RANGE, "key %u: [%llu, +%u) outside the data region of %llu bytes", i,
                (unsigned long long)keys[i].offset, keys[i].length, (unsigned long long)client->data_region_bytes);
        }
        bytes += REQUEST_KEY_BYTES + keys[i].hash_length;
        if (lineage != NULL)
        {
            if (lineage[i].parent_hash_length > OKV_MAX_HASH_LENGTH ||
                (lineage[i].parent_hash_length > 0 && lineage[i].parent_hash == NULL))
            {
                return fail(client, OKV_S_KEY_TOO_LARGE, "key %u: parent hash of %u bytes, 0..%d allowed", i,
                    lineage[i].parent_hash_length, OKV_MAX_HASH_LENGTH);
            }
            if (lineage[i].token_count > OKV_MAX_TOKENS_PER_BLOCK ||
                (lineage[i].token_count > 0 && lineage[i].token_ids == NULL))
            {
                return fail(client, OKV_S_BATCH_TOO_LARGE, "key %u: %u token ids, 0..%d allowed", i,
                    lineage[i].token_count, OKV_MAX_TOKENS_PER_BLOCK);
            }
            bytes += lineage[i].parent_hash_length + (int64_t)lineage[i].token_count * 4;
        }
    }
    if (bytes > client->max_request_bytes)
    {
        return fail(client, OKV_S_BATCH_TOO_LARGE, "request of %lld bytes over the limit of %d", (long long)bytes,
            client->max_request_bytes);
    }
    return OKV_OK;
}

static int32_t encode_publish(okv_client *client, int64_t correlation_id, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, const okv_lineage *lineage)
{
    struct SBE(messageHeader) hdr;
    struct SBE(publishRequest) req;
    struct SBE(publishRequest_blocks) blocks;
    char *buf = (char *)client->send_buffer;
    if (!SBE(publishRequest_wrap_and_apply_header)(&req, buf, 0, sizeof(client->send_buffer), &hdr))
    {
        return -1;
    }
    SBE(publishRequest_set_clientId)(&req, client->client_id);
    SBE(publishRequest_set_correlationId)(&req, correlation_id);
    if (!SBE(publishRequest_blocks_set_count)(&req, &blocks, (uint16_t)key_count))
    {
        return -1;
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (!SBE(publishRequest_blocks_next)(&blocks))
        {
            return -1;
        }
        SBE(publishRequest_blocks_set_offset)(&blocks, (int64_t)keys[i].offset);
        SBE(publishRequest_blocks_set_length)(&blocks, (int32_t)keys[i].length);
        if (!SBE(publishRequest_blocks_put_hash)(&blocks, (const char *)keys[i].hash, (uint8_t)keys[i].hash_length))
        {
            return -1;
        }
        /* Both lineage fields go into every entry, empty when the key has none: the Manager walks them all. */
        const okv_lineage *l = lineage != NULL ? &lineage[i] : NULL;
        const uint8_t parent_length = l != NULL ? (uint8_t)l->parent_hash_length : 0;
        const uint16_t token_bytes = l != NULL ? (uint16_t)(l->token_count * 4) : 0;
        if (!SBE(publishRequest_blocks_put_parentHash)(&blocks,
            parent_length > 0 ? (const char *)l->parent_hash : "", parent_length) ||
            !SBE(publishRequest_blocks_put_tokenIds)(&blocks,
            token_bytes > 0 ? (const char *)l->token_ids : "", token_bytes))
        {
            return -1;
        }
    }
    if (!SBE(publishRequest_put_keyNamespace)(&req, (const char *)ns, (uint16_t)ns_length))
    {
        return -1;
    }
    return (int32_t)(SBE(messageHeader_encoded_length)() + SBE(publishRequest_encoded_length)(&req));
}

static int32_t encode_prepare(okv_client *client, int64_t correlation_id, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count)
{
    struct SBE(messageHeader) hdr;
    struct SBE(prepareRequest) req;
    struct SBE(prepareRequest_blocks) blocks;
    char *buf = (char *)client->send_buffer;
    if (!SBE(prepareRequest_wrap_and_apply_header)(&req, buf, 0, sizeof(client->send_buffer), &hdr))
    {
        return -1;
    }
    SBE(prepareRequest_set_clientId)(&req, client->client_id);
    SBE(prepareRequest_set_correlationId)(&req, correlation_id);
    if (!SBE(prepareRequest_blocks_set_count)(&req, &blocks, (uint16_t)key_count))
    {
        return -1;
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (!SBE(prepareRequest_blocks_next)(&blocks))
        {
            return -1;
        }
        SBE(prepareRequest_blocks_set_length)(&blocks, (int32_t)keys[i].length);
        if (!SBE(prepareRequest_blocks_put_hash)(&blocks, (const char *)keys[i].hash, (uint8_t)keys[i].hash_length))
        {
            return -1;
        }
    }
    if (!SBE(prepareRequest_put_keyNamespace)(&req, (const char *)ns, (uint16_t)ns_length))
    {
        return -1;
    }
    return (int32_t)(SBE(messageHeader_encoded_length)() + SBE(prepareRequest_encoded_length)(&req));
}

static int32_t encode_commit(okv_client *client, int64_t correlation_id, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count)
{
    struct SBE(messageHeader) hdr;
    struct SBE(commitRequest) req;
    struct SBE(commitRequest_keys) group;
    char *buf = (char *)client->send_buffer;
    if (!SBE(commitRequest_wrap_and_apply_header)(&req, buf, 0, sizeof(client->send_buffer), &hdr))
    {
        return -1;
    }
    SBE(commitRequest_set_clientId)(&req, client->client_id);
    SBE(commitRequest_set_correlationId)(&req, correlation_id);
    if (!SBE(commitRequest_keys_set_count)(&req, &group, (uint16_t)key_count))
    {
        return -1;
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (!SBE(commitRequest_keys_next)(&group) ||
            !SBE(commitRequest_keys_put_hash)(&group, (const char *)keys[i].hash, (uint8_t)keys[i].hash_length))
        {
            return -1;
        }
    }
    if (!SBE(commitRequest_put_keyNamespace)(&req, (const char *)ns, (uint16_t)ns_length))
    {
        return -1;
    }
    return (int32_t)(SBE(messageHeader_encoded_length)() + SBE(commitRequest_encoded_length)(&req));
}

static int32_t encode_lookup(okv_client *client, int64_t correlation_id, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int pin, int peers)
{
    struct SBE(messageHeader) hdr;
    struct SBE(lookupRequest) req;
    struct SBE(lookupRequest_keys) group;
    struct SBE(lookupFlags) flags;
    char *buf = (char *)client->send_buffer;
    if (!SBE(lookupRequest_wrap_and_apply_header)(&req, buf, 0, sizeof(client->send_buffer), &hdr))
    {
        return -1;
    }
    SBE(lookupRequest_set_clientId)(&req, client->client_id);
    SBE(lookupRequest_set_correlationId)(&req, correlation_id);
    if (!SBE(lookupRequest_flags)(&req, &flags))
    {
        return -1;
    }
    SBE(lookupFlags_clear)(&flags);
    SBE(lookupFlags_set_pin)(&flags, pin != 0);
    SBE(lookupFlags_set_peers)(&flags, peers != 0);
    if (!SBE(lookupRequest_keys_set_count)(&req, &group, (uint16_t)key_count))
    {
        return -1;
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (!SBE(lookupRequest_keys_next)(&group) ||
            !SBE(lookupRequest_keys_put_hash)(&group, (const char *)keys[i].hash, (uint8_t)keys[i].hash_length))
        {
            return -1;
        }
    }
    if (!SBE(lookupRequest_put_keyNamespace)(&req, (const char *)ns, (uint16_t)ns_length))
    {
        return -1;
    }
    return (int32_t)(SBE(messageHeader_encoded_length)() + SBE(lookupRequest_encoded_length)(&req));
}

static int32_t encode_read(okv_client *client, int64_t correlation_id, const uint8_t *ns, uint32_t ns_length,
    const okv_key *keys, uint32_t key_count, int64_t lease_id)
{
    struct SBE(messageHeader) hdr;
    struct SBE(readRequest) req;
    struct SBE(readRequest_keys) group;
    struct SBE(readFlags) flags;
    char *buf = (char *)client->send_buffer;
    if (!SBE(readRequest_wrap_and_apply_header)(&req, buf, 0, sizeof(client->send_buffer), &hdr))
    {
        return -1;
    }
    SBE(readRequest_set_clientId)(&req, client->client_id);
    SBE(readRequest_set_correlationId)(&req, correlation_id);
    SBE(readRequest_set_leaseId)(&req, lease_id);
    if (!SBE(readRequest_flags)(&req, &flags))
    {
        return -1;
    }
    SBE(readFlags_clear)(&flags);
    if (!SBE(readRequest_keys_set_count)(&req, &group, (uint16_t)key_count))
    {
        return -1;
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (!SBE(readRequest_keys_next)(&group))
        {
            return -1;
        }
        SBE(readRequest_keys_set_dstOffset)(&group, (int64_t)keys[i].offset);
        SBE(readRequest_keys_set_dstCapacity)(&group, (int32_t)keys[i].length);
        if (!SBE(readRequest_keys_put_hash)(&group, (const char *)keys[i].hash, (uint8_t)keys[i].hash_length))
        {
            return -1;
        }
    }
    if (!SBE(readRequest_put_keyNamespace)(&req, (const char *)ns, (uint16_t)ns_length))
    {
        return -1;
    }
    return (int32_t)(SBE(messageHeader_encoded_length)() + SBE(readRequest_encoded_length)(&req));
}

#define OP_PUBLISH 1
#define OP_LOOKUP 2
#define OP_READ 3
#define OP_RELEASE 4
#define OP_PREPARE 5
#define OP_COMMIT 6

/* Encode and send one request; on success *out is its pending answer. Caller holds the lock. */
static int submit_locked(okv_client *client, int op, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, const okv_lineage *lineage, int32_t key_base, int pin, int peers, int64_t lease_id,
    int is_ticket, pending **out)
{
    if (!client->attached)
    {
        return fail(client, OKV_E_CLOSED, "client no longer attached");
    }
    if (op != OP_RELEASE)
    {
        const int status = check_keys(client, ns, ns_length, keys, key_count, op == OP_PUBLISH || op == OP_READ,
            op == OP_PUBLISH ? lineage : NULL);
        if (status != OKV_OK)
        {
            return status;
        }
    }
    pending *p = claim_pending(client, is_ticket);
    if (p == NULL)
    {
        return fail(client, OKV_E_TOO_MANY_TICKETS, "%d tickets outstanding", OKV_MAX_TICKETS);
    }
    const int64_t correlation_id = ring_next_correlation_id(&client->request_ring);
    int32_t length = -1;
    int32_t template_id = 0;
    switch (op)
    {
        case OP_PUBLISH:
            length = encode_publish(client, correlation_id, ns, ns_length, keys, key_count, lineage);
            template_id = SBE(publishRequest_sbe_template_id)();
            break;
        case OP_LOOKUP:
            length = encode_lookup(client, correlation_id, ns, ns_length, keys, key_count, pin, peers);
            template_id = SBE(lookupRequest_sbe_template_id)();
            break;
        case OP_PREPARE:
            length = encode_prepare(client, correlation_id, ns, ns_length, keys, key_count);
            template_id = SBE(prepareRequest_sbe_template_id)();
            break;
        case OP_COMMIT:
            length = encode_commit(client, correlation_id, ns, ns_length, keys, key_count);
            template_id = SBE(commitRequest_sbe_template_id)();
            break;
        case OP_READ:
            length = encode_read(client, correlation_id, ns, ns_length, keys, key_count, lease_id);
            template_id = SBE(readRequest_sbe_template_id)();
            break;
        default:
        {
            struct SBE(messageHeader) hdr;
            struct SBE(releaseRequest) req;
            if (SBE(releaseRequest_wrap_and_apply_header)(&req, (char *)client->send_buffer, 0,
                sizeof(client->send_buffer), &hdr))
            {
                SBE(releaseRequest_set_clientId)(&req, client->client_id);
                SBE(releaseRequest_set_correlationId)(&req, correlation_id);
                SBE(releaseRequest_set_leaseId)(&req, lease_id);
                length = (int32_t)(SBE(messageHeader_encoded_length)() + SBE(releaseRequest_encoded_length)(&req));
            }
            template_id = SBE(releaseRequest_sbe_template_id)();
            key_count = 0;
        }
    }
    if (length < 0)
    {
        p->in_use = 0;
        return fail(client, OKV_S_BATCH_TOO_LARGE, "request does not fit %zu bytes", sizeof(client->send_buffer));
    }
    p->correlation_id = correlation_id;
    p->key_count = (int32_t)key_count;
    p->key_base = key_base;
    const int64_t deadline = mono_ns() + client->response_timeout_ms * 1000000LL;
    const int status = send_locked(client, template_id, length, 1, deadline);
    if (status != OKV_OK)
    {
        p->in_use = 0;
        return status;
    }
    *out = p;
    return OKV_OK;
}

static int call_at(okv_client *client, int op, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, const okv_lineage *lineage, int32_t key_base, int pin, int peers, int64_t lease_id, okv_result *result)
{
    if (client == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&client->lock);
    pending *p = NULL;
    int status = submit_locked(client, op, ns, ns_length, keys, key_count, lineage, key_base, pin, peers, lease_id, 0,
        &p);
    if (status == OKV_OK)
    {
        const int64_t deadline = mono_ns() + client->response_timeout_ms * 1000000LL;
        status = await_locked(client, p, deadline, 1, result);
    }
    else if (result != NULL)
    {
        init_result_for(result, status);
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

static int call(okv_client *client, int op, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int pin, int peers, int64_t lease_id, okv_result *result)
{
    return call_at(client, op, ns, ns_length, keys, key_count, NULL, 0, pin, peers, lease_id, result);
}

int okv_publish(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    okv_result *result)
{
    return call(client, OP_PUBLISH, ns, ns_length, keys, key_count, 0, 0, 0, result);
}

int okv_prepare(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    okv_result *result)
{
    return call(client, OP_PREPARE, ns, ns_length, keys, key_count, 0, 0, 0, result);
}

int okv_commit(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    okv_result *result)
{
    return call(client, OP_COMMIT, ns, ns_length, keys, key_count, 0, 0, 0, result);
}

int okv_publish_lineage(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    const okv_lineage *lineage, uint32_t key_count, okv_result *result)
{
    if (client == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    return call_at(client, OP_PUBLISH, ns, ns_length, keys, key_count, lineage, 0, 0, 0, 0, result);
}

int okv_lookup(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    int pin, int peers, okv_result *result)
{
    return call(client, OP_LOOKUP, ns, ns_length, keys, key_count, pin, peers, 0, result);
}

int okv_lookup_packed(okv_client *client, const uint8_t *ns, uint32_t ns_length, const uint8_t *hashes,
    uint32_t hash_length, uint32_t key_count, int pin, int peers, okv_result *result)
{
    if (client == NULL || hashes == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    if (key_count > OKV_MAX_KEYS)
    {
        if (result != NULL)
        {
            init_result_for(result, OKV_S_BATCH_TOO_LARGE);
        }
        return fail(client, OKV_S_BATCH_TOO_LARGE, "%u keys, one request takes 1..%d", key_count, client->max_keys);
    }
    okv_key keys[OKV_MAX_KEYS];
    for (uint32_t i = 0; i < key_count; i++)
    {
        keys[i].hash = hashes + (size_t)i * hash_length;
        keys[i].hash_length = hash_length;
        keys[i].length = 0;
        keys[i].offset = 0;
    }
    return call(client, OP_LOOKUP, ns, ns_length, keys, key_count, pin, peers, 0, result);
}

int okv_read(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys, uint32_t key_count,
    int64_t lease_id, okv_result *result)
{
    return call(client, OP_READ, ns, ns_length, keys, key_count, 0, 0, lease_id, result);
}

int okv_release(okv_client *client, int64_t lease_id, okv_result *result)
{
    return call(client, OP_RELEASE, NULL, 0, NULL, 0, 0, 0, lease_id, result);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Chains: split as the Java EngineClient splits a KeyBatch */

/* End (exclusive) of the longest slice from start within the key and the byte limit (the bounds check_keys uses). */
static uint32_t chunk_end(const okv_client *client, uint32_t ns_length, const okv_key *keys, uint32_t start,
    uint32_t key_count)
{
    const uint32_t limit = key_count - start > (uint32_t)client->max_keys ? start + (uint32_t)client->max_keys : key_count;
    int64_t bytes = REQUEST_FIXED_BYTES + ns_length;
    uint32_t end = start;
    while (end < limit)
    {
        const int64_t key_bytes = REQUEST_KEY_BYTES + keys[end].hash_length;
        if (bytes + key_bytes > client->max_request_bytes)
        {
            break;
        }
        bytes += key_bytes;
        end++;
    }
    return end;
}

/* Requests the chain takes, or 0 when a key is malformed (then nothing may be sent). */
static uint32_t count_chunks(const okv_client *client, uint32_t ns_length, const okv_key *keys, uint32_t key_count)
{
    uint32_t requests = 0;
    for (uint32_t start = 0; start < key_count; requests++)
    {
        const uint32_t end = chunk_end(client, ns_length, keys, start, key_count);
        if (end == start)
        {
            return 0;
        }
        start = end;
    }
    return requests;
}

int32_t okv_chain_requests(const okv_client *client, uint32_t ns_length, const okv_key *keys, uint32_t key_count)
{
    if (client == NULL || keys == NULL || ns_length > OKV_MAX_NAMESPACE_LENGTH)
    {
        return 0;
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        if (keys[i].hash_length < 1 || keys[i].hash_length > OKV_MAX_HASH_LENGTH)
        {
            return 0;
        }
    }
    return (int32_t)count_chunks(client, ns_length, keys, key_count);
}

static int chain(okv_client *client, int op, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int pin, int peers, const int64_t *lease_ids, uint32_t lease_count, okv_result *results,
    uint32_t result_capacity, uint32_t *requests)
{
    if (client == NULL || results == NULL || requests == NULL || result_capacity < 1 ||
        (lease_ids == NULL && lease_count > 0))
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    *requests = 0;
    /* the whole chain is checked before its first request is written: every key as one request's keys would be */
    int status = OKV_OK;
    if (keys == NULL || key_count < 1)
    {
        status = fail(client, OKV_S_BATCH_TOO_LARGE, "%u keys, a chain takes at least 1", key_count);
    }
    for (uint32_t start = 0; status == OKV_OK && start < key_count; start += (uint32_t)client->max_keys)
    {
        const uint32_t n = key_count - start < (uint32_t)client->max_keys ? key_count - start : (uint32_t)client->max_keys;
        status = check_keys(client, ns, ns_length, keys + start, n, op != OP_LOOKUP, NULL);
        if (status == OKV_S_BATCH_TOO_LARGE)
        {
            status = OKV_OK; /* bytes over one request's limit: the split below takes care of that */
        }
    }
    const uint32_t needed = status == OKV_OK ? count_chunks(client, ns_length, keys, key_count) : 0;
    if (status == OKV_OK && needed > result_capacity)
    {
        status = fail(client, OKV_S_BATCH_TOO_LARGE, "a chain of %u keys takes %u requests, results hold %u",
            key_count, needed, result_capacity);
    }
    if (status != OKV_OK)
    {
        init_result_for(&results[0], status);
        return status;
    }
    uint32_t request = 0;
    for (uint32_t start = 0; start < key_count;)
    {
        const uint32_t end = chunk_end(client, ns_length, keys, start, key_count);
        const int64_t lease = op == OP_READ && request < lease_count ? lease_ids[request] : 0;
        okv_result *result = &results[request];
        status = call_at(client, op, ns, ns_length, keys + start, end - start, NULL, (int32_t)start, pin, peers, lease,
            result);
        request++;
        if (status != OKV_OK || (op != OP_PUBLISH && result->value < (int64_t)(end - start)))
        {
            break;
        }
        start = end;
    }
    *requests = request;
    /* a read consumes the lookup's leases: those no request carried are released here */
    for (uint32_t i = request; op == OP_READ && i < lease_count; i++)
    {
        if (lease_ids[i] != 0)
        {
            call(client, OP_RELEASE, NULL, 0, NULL, 0, 0, 0, lease_ids[i], NULL);
        }
    }
    return status;
}

int okv_publish_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, okv_result *results, uint32_t result_capacity, uint32_t *requests)
{
    return chain(client, OP_PUBLISH, ns, ns_length, keys, key_count, 0, 0, NULL, 0, results, result_capacity,
        requests);
}

int okv_lookup_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int pin, int peers, okv_result *results, uint32_t result_capacity, uint32_t *requests)
{
    return chain(client, OP_LOOKUP, ns, ns_length, keys, key_count, pin, peers, NULL, 0, results, result_capacity,
        requests);
}

int okv_lookup_packed_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const uint8_t *hashes,
    uint32_t hash_length, uint32_t key_count, int pin, int peers, okv_result *results, uint32_t result_capacity,
    uint32_t *requests)
{
    if (client == NULL || hashes == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    okv_key local[OKV_MAX_KEYS];
    okv_key *keys = key_count <= OKV_MAX_KEYS ? local : malloc(sizeof(okv_key) * (size_t)key_count);
    if (key_count == 0)
    {
        local[0].hash = hashes; /* never read: a chain of no keys is refused */
    }
    if (keys == NULL)
    {
        return fail(client, OKV_E_SYSTEM, "no memory for %u keys", key_count);
    }
    for (uint32_t i = 0; i < key_count; i++)
    {
        keys[i].hash = hashes + (size_t)i * hash_length;
        keys[i].hash_length = hash_length;
        keys[i].length = 0;
        keys[i].offset = 0;
    }
    const int status = chain(client, OP_LOOKUP, ns, ns_length, keys, key_count, pin, peers, NULL, 0, results,
        result_capacity, requests);
    if (keys != local)
    {
        free(keys);
    }
    return status;
}

int okv_read_chain(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, const int64_t *lease_ids, uint32_t lease_count, okv_result *results, uint32_t result_capacity,
    uint32_t *requests)
{
    return chain(client, OP_READ, ns, ns_length, keys, key_count, 0, 0, lease_ids, lease_count, results,
        result_capacity, requests);
}

static int submit_ticket(okv_client *client, int op, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, const okv_lineage *lineage, int pin, int peers, int64_t lease_id, int64_t *ticket)
{
    if (client == NULL || ticket == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&client->lock);
    pending *p = NULL;
    const int status = submit_locked(client, op, ns, ns_length, keys, key_count, lineage, 0, pin, peers, lease_id, 1,
        &p);
    if (status == OKV_OK)
    {
        p->ticket = ++client->next_ticket;
        *ticket = p->ticket;
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

int okv_submit_lookup(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int pin, int peers, int64_t *ticket)
{
    return submit_ticket(client, OP_LOOKUP, ns, ns_length, keys, key_count, NULL, pin, peers, 0, ticket);
}

int okv_submit_read(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int64_t lease_id, int64_t *ticket)
{
    return submit_ticket(client, OP_READ, ns, ns_length, keys, key_count, NULL, 0, 0, lease_id, ticket);
}

int okv_submit_publish(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int64_t *ticket)
{
    return submit_ticket(client, OP_PUBLISH, ns, ns_length, keys, key_count, NULL, 0, 0, 0, ticket);
}

int okv_submit_commit(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    uint32_t key_count, int64_t *ticket)
{
    return submit_ticket(client, OP_COMMIT, ns, ns_length, keys, key_count, NULL, 0, 0, 0, ticket);
}

int okv_submit_publish_lineage(okv_client *client, const uint8_t *ns, uint32_t ns_length, const okv_key *keys,
    const okv_lineage *lineage, uint32_t key_count, int64_t *ticket)
{
    return submit_ticket(client, OP_PUBLISH, ns, ns_length, keys, key_count, lineage, 0, 0, 0, ticket);
}

static pending *find_ticket(okv_client *client, int64_t ticket)
{
    for (int i = 0; i < PENDING_CAPACITY; i++)
    {
        if (client->pendings[i].in_use && client->pendings[i].is_ticket && client->pendings[i].ticket == ticket)
        {
            return &client->pendings[i];
        }
    }
    return NULL;
}

int okv_poll(okv_client *client, int64_t ticket, okv_result *result)
{
    if (client == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&client->lock);
    pending *p = find_ticket(client, ticket);
    int status;
    if (p == NULL)
    {
        status = OKV_E_UNKNOWN_TICKET;
    }
    else
    {
        if (!p->done)
        {
            spsc_read(client, &client->response_ring, on_response, RESPONSE_READ_LIMIT);
        }
        if (p->done)
        {
            status = await_locked(client, p, mono_ns(), 1, result);
        }
        else
        {
            status = check_wait(client, INT64_MAX, 1, "");
            if (status == OKV_OK)
            {
                status = OKV_E_PENDING;
            }
            else
            {
                p->in_use = 0;
            }
        }
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

int okv_wait(okv_client *client, int64_t ticket, int64_t timeout_ms, okv_result *result)
{
    if (client == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&client->lock);
    pending *p = find_ticket(client, ticket);
    int status = OKV_E_UNKNOWN_TICKET;
    if (p != NULL)
    {
        const int64_t deadline = mono_ns() + (timeout_ms < 0 ? client->response_timeout_ms : timeout_ms) * 1000000LL;
        status = await_locked(client, p, deadline, 1, result);
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Heartbeats */

static int send_heartbeat(okv_client *client)
{
    if (load_i64_acquire(client->slot + SLOT_CLIENT_ID_OFFSET) != client->client_id)
    {
        return 0;
    }
    uint8_t buffer[64];
    struct SBE(messageHeader) hdr;
    struct SBE(heartbeatRequest) req;
    if (!SBE(heartbeatRequest_wrap_and_apply_header)(&req, (char *)buffer, 0, sizeof(buffer), &hdr))
    {
        return 0;
    }
    SBE(heartbeatRequest_set_clientId)(&req, client->client_id);
    SBE(heartbeatRequest_set_correlationId)(&req, ring_next_correlation_id(&client->request_ring));
    const int32_t length = (int32_t)(SBE(messageHeader_encoded_length)() + SBE(heartbeatRequest_encoded_length)(&req));
    /* the request ring takes many producers: no lock needed, as the Java heartbeat thread does */
    return mpsc_write(&client->request_ring, SBE(heartbeatRequest_sbe_template_id)(), buffer, length);
}

int okv_do_work(okv_client *client)
{
    if (client == NULL || client->heartbeat_running || !client->attached)
    {
        return 0;
    }
    const int64_t now = epoch_ms();
    if (now - client->last_heartbeat_ms < client->heartbeat_interval_ms)
    {
        return 0;
    }
    client->last_heartbeat_ms = now;
    return send_heartbeat(client);
}

static void *heartbeat_main(void *arg)
{
    okv_client *client = arg;
    pthread_mutex_lock(&client->heartbeat_lock);
    while (!client->heartbeat_stop)
    {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        const int64_t ns = until.tv_nsec + client->heartbeat_interval_ms * 1000000LL;
        until.tv_sec += ns / 1000000000LL;
        until.tv_nsec = ns % 1000000000LL;
        pthread_cond_timedwait(&client->heartbeat_cond, &client->heartbeat_lock, &until);
        if (!client->heartbeat_stop)
        {
            send_heartbeat(client);
        }
    }
    pthread_mutex_unlock(&client->heartbeat_lock);
    return NULL;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Attach and detach */

static void unmap_all(okv_client *client)
{
    if (client->heartbeat_running)
    {
        pthread_mutex_lock(&client->heartbeat_lock);
        client->heartbeat_stop = 1;
        pthread_cond_signal(&client->heartbeat_cond);
        pthread_mutex_unlock(&client->heartbeat_lock);
        pthread_join(client->heartbeat_thread, NULL);
        client->heartbeat_running = 0;
    }
    if (client->data_region != NULL)
    {
        munmap(client->data_region, client->data_region_bytes);
        client->data_region = NULL;
    }
    if (client->pool != NULL)
    {
        munmap(client->pool, client->pool_bytes);
        client->pool = NULL;
    }
    if (client->doorbell_fd >= 0)
    {
        close(client->doorbell_fd);
        client->doorbell_fd = -1;
    }
    if (client->cnc != NULL)
    {
        munmap(client->cnc, client->cnc_length);
        client->cnc = NULL;
    }
}

/* The Manager's pool file, mapped read-write, for zero-copy saves (a Manager with --engine-pool-access
 * write-reserved). */
static int map_pool(okv_client *client, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/pool.dat", dir);
    const int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
    {
        if (fd >= 0)
        {
            close(fd);
        }
        return fail(client, OKV_E_SYSTEM, "cannot open the Manager's pool %s: %s", path, strerror(errno));
    }
    void *pool = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (pool == MAP_FAILED)
    {
        return fail(client, OKV_E_SYSTEM, "mmap the Manager's pool %s: %s", path, strerror(errno));
    }
    client->pool = pool;
    client->pool_bytes = (uint64_t)st.st_size;
    return OKV_OK;
}

static void free_claim(okv_client *client)
{
    if (client->slot != NULL && SLOT_CLAIMED == load_i32_acquire(client->slot + SLOT_STATE_OFFSET) &&
        load_i64_acquire(client->slot + SLOT_CLAIM_PID_OFFSET) == client->pid)
    {
        store_i32_release(client->slot + SLOT_STATE_OFFSET, SLOT_FREE);
        cas_i64(client->slot + SLOT_CLAIM_PID_OFFSET, client->pid, 0);
    }
}

static int map_cnc(okv_client *client, const char *dir, int64_t deadline_ns)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/cnc.dat", dir);
    const char *problem = "no cnc.dat";
    while (1)
    {
        const int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd >= 0)
        {
            struct stat st;
            if (fstat(fd, &st) == 0 && st.st_size >= CNC_HEADER_LENGTH)
            {
                uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
                if (base == MAP_FAILED)
                {
                    return fail(client, OKV_E_SYSTEM, "mmap %s: %s", path, strerror(errno));
                }
                const int32_t version = load_i32_acquire(base + CNC_LAYOUT_VERSION_OFFSET);
                if (version == CNC_LAYOUT_VERSION)
                {
                    client->cnc = base;
                    client->cnc_length = (size_t)st.st_size;
                    return OKV_OK;
                }
                munmap(base, (size_t)st.st_size);
                if (version != 0)
                {
                    return fail(client, OKV_E_INCOMPATIBLE_LAYOUT, "%s has layout version %d, this client understands %d",
                        path, version, CNC_LAYOUT_VERSION);
                }
                problem = "layout version 0 (not ready)";
            }
            else
            {
                close(fd);
                problem = "shorter than its header";
            }
        }
        else if (errno == EACCES)
        {
            /* a Manager is there but its files are not this user's: waiting would not change that */
            return fail(client, OKV_E_SYSTEM, "permission denied on %s: the Manager's files are its user's only; run the "
                "engine as that user, or start the Manager with --engine-group G and run the engine in group G", path);
        }
        if (mono_ns() - deadline_ns > 0)
        {
            return fail(client, OKV_E_NO_MANAGER, "no Manager ready in %s: %s", dir, problem);
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

static int wrap_sections(okv_client *client)
{
    const uint8_t *h = client->cnc;
    const int32_t request_ring_length = read_i32(h + CNC_REQUEST_RING_LENGTH_OFFSET);
    const int32_t max_clients = read_i32(h + CNC_MAX_CLIENTS_OFFSET);
    const int32_t response_ring_length = read_i32(h + CNC_RESPONSE_RING_LENGTH_OFFSET);
    const int32_t meta_length = read_i32(h + CNC_COUNTERS_METADATA_LENGTH_OFFSET);
    const int32_t values_length = read_i32(h + CNC_COUNTERS_VALUES_LENGTH_OFFSET);
    const int32_t error_log_length = read_i32(h + CNC_ERROR_LOG_LENGTH_OFFSET);
    const int32_t request_capacity = request_ring_length - RB_TRAILER_LENGTH;
    const int32_t response_capacity = response_ring_length - RB_TRAILER_LENGTH;
    if (request_capacity <= 0 || (request_capacity & (request_capacity - 1)) != 0 || response_capacity <= 0 ||
        (response_capacity & (response_capacity - 1)) != 0 || max_clients < 1 || max_clients > 4096)
    {
        return fail(client, OKV_E_INCOMPATIBLE_LAYOUT, "CnC header describes impossible rings");
    }
    const int64_t slot_table = CNC_HEADER_LENGTH + align_section(request_ring_length);
    const int64_t response_rings = slot_table + align_section((int64_t)max_clients * CNC_SLOT_LENGTH);
    const int64_t counters_meta = response_rings + (int64_t)max_clients * align_section(response_ring_length);
    const int64_t expected = counters_meta + align_section(meta_length) + align_section(values_length) +
        align_section(error_log_length);
    if ((uint64_t)expected > client->cnc_length)
    {
        return fail(client, OKV_E_INCOMPATIBLE_LAYOUT, "CnC file shorter than its header describes: %zu < %lld",
            client->cnc_length, (long long)expected);
    }
    client->request_ring.buffer = client->cnc + CNC_HEADER_LENGTH;
    client->request_ring.capacity = request_capacity;
    const int64_t liveness_ns = read_i64(h + CNC_CLIENT_LIVENESS_NS_OFFSET);
    client->client_liveness_ms = liveness_ns / 1000000;
    client->manager_timeout_ms = client->client_liveness_ms > MIN_MANAGER_TIMEOUT_MS ?
        client->client_liveness_ms : MIN_MANAGER_TIMEOUT_MS;
    const int32_t header_keys = read_i32(h + CNC_MAX_KEYS_PER_REQUEST_OFFSET);
    client->max_keys = header_keys > 0 && header_keys < OKV_MAX_KEYS ? header_keys : OKV_MAX_KEYS;
    const int32_t header_bytes = read_i32(h + CNC_MAX_REQUEST_BYTES_OFFSET);
    int32_t max_bytes = header_bytes > 0 && header_bytes < MAX_REQUEST_BYTES ? header_bytes : MAX_REQUEST_BYTES;
    if (max_bytes > ring_max_msg_length(&client->request_ring))
    {
        max_bytes = ring_max_msg_length(&client->request_ring);
    }
    client->max_request_bytes = max_bytes;

    for (int32_t i = 0; i < max_clients; i++)
    {
        uint8_t *slot = client->cnc + slot_table + (int64_t)i * CNC_SLOT_LENGTH;
        if (0 == load_i64_acquire(slot + SLOT_CLAIM_PID_OFFSET) && cas_i64(slot + SLOT_CLAIM_PID_OFFSET, 0, client->pid))
        {
            store_i64_release(slot + SLOT_CLAIM_TIME_MS_OFFSET, epoch_ms());
            store_i32_release(slot + SLOT_STATE_OFFSET, SLOT_CLAIMED);
            client->slot = slot;
            client->slot_index = i;
            client->response_ring.buffer = client->cnc + response_rings + (int64_t)i * align_section(response_ring_length);
            client->response_ring.capacity = response_capacity;
            return OKV_OK;
        }
    }
    return fail(client, OKV_E_NO_FREE_SLOT, "all %d client slots are claimed", max_clients);
}

/* The size of okv_options in ABI version 1: callers built against it may pass exactly this much. */
#define OPTIONS_V1_SIZE (offsetof(okv_options, heartbeat_thread) + sizeof(int))

int okv_open(const okv_options *caller_options, okv_client **out)
{
    open_error[0] = '\0';
    if (caller_options == NULL || out == NULL || caller_options->size < OPTIONS_V1_SIZE)
    {
        snprintf(open_error, sizeof(open_error), "no options, no place for the client, or options older than version 1");
        return OKV_E_INVALID_ARGUMENT;
    }
    /* fields this library knows and the caller's struct lacks keep their defaults */
    okv_options local;
    okv_options_init(&local);
    memcpy(&local, caller_options, caller_options->size < sizeof(local) ? caller_options->size : sizeof(local));
    const okv_options *options = &local;
    *out = NULL;
    const char *dir = options->dir != NULL ? options->dir : "/dev/shm/orbitkv/default";
    char default_name[64];
    const char *name = options->name;
    if (name == NULL)
    {
        snprintf(default_name, sizeof(default_name), "engine-%ld", (long)getpid());
        name = default_name;
    }
    const size_t name_length = strlen(name);
    if (name_length < 1 || name_length > OKV_MAX_CLIENT_NAME_LENGTH || strlen(dir) > 3000 ||
        options->wait_yield_us < 0 || options->wait_yield_us > MAX_WAIT_YIELD_US)
    {
        snprintf(open_error, sizeof(open_error), "client name of %zu bytes (1 to %d), directory path of %zu bytes "
            "(at most 3000) or wait_yield_us %lld (0 to %d) out of range", name_length, OKV_MAX_CLIENT_NAME_LENGTH,
            strlen(dir), (long long)options->wait_yield_us, MAX_WAIT_YIELD_US);
        return OKV_E_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < name_length; i++)
    {
        if ((unsigned char)name[i] > 127)
        {
            snprintf(open_error, sizeof(open_error), "client name is not ASCII");
            return OKV_E_INVALID_ARGUMENT;
        }
    }
    okv_client *client = calloc(1, sizeof(okv_client));
    if (client == NULL)
    {
        snprintf(open_error, sizeof(open_error), "out of memory for the client");
        return OKV_E_SYSTEM;
    }
    client->doorbell_fd = -1;
    client->slot_index = -1;
    client->pid = getpid();
    client->data_region_bytes = options->data_region_bytes > 0 ? options->data_region_bytes : DEFAULT_DATA_REGION_BYTES;
    client->response_timeout_ms = options->response_timeout_ms > 0 ? options->response_timeout_ms : DEFAULT_TIMEOUT_MS;
    client->wait_yield_ns = (options->wait_yield_us > 0 ? options->wait_yield_us : DEFAULT_WAIT_YIELD_US) * 1000LL;
    const int64_t attach_timeout_ms = options->attach_timeout_ms > 0 ? options->attach_timeout_ms : DEFAULT_TIMEOUT_MS;
    pthread_mutex_init(&client->lock, NULL);
    pthread_mutex_init(&client->heartbeat_lock, NULL);
    pthread_cond_init(&client->heartbeat_cond, NULL);
    const int64_t deadline = mono_ns() + attach_timeout_ms * 1000000LL;

    int status = map_cnc(client, dir, deadline);
    if (status == OKV_OK)
    {
        char path[4096];
        snprintf(path, sizeof(path), "%s/doorbell", dir);
        client->doorbell_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (client->doorbell_fd < 0)
        {
            status = fail(client, OKV_E_NO_MANAGER, "cannot open the Manager's doorbell %s: %s", path, strerror(errno));
        }
    }
    if (status == OKV_OK)
    {
        status = wrap_sections(client);
    }
    if (status == OKV_OK)
    {
        /* a fresh Manager heartbeat, or give up once its process is gone or the deadline passed */
        const int64_t manager_pid = read_i64(client->cnc + CNC_MANAGER_PID_OFFSET);
        while (!manager_alive(client))
        {
            const int gone = manager_pid > 0 && kill((pid_t)manager_pid, 0) != 0 && errno == ESRCH;
            if (gone || mono_ns() - deadline > 0)
            {
                status = fail(client, OKV_E_STALE_MANAGER, "Manager (pid %lld%s) heartbeat stale",
                    (long long)manager_pid, gone ? ", not running" : "");
                break;
            }
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    }
    pending *p = NULL;
    if (status == OKV_OK)
    {
        struct SBE(messageHeader) hdr;
        struct SBE(attachRequest) req;
        const int64_t correlation_id = ring_next_correlation_id(&client->request_ring);
        SBE(attachRequest_wrap_and_apply_header)(&req, (char *)client->send_buffer, 0, sizeof(client->send_buffer), &hdr);
        SBE(attachRequest_set_correlationId)(&req, correlation_id);
        SBE(attachRequest_set_slotIndex)(&req, client->slot_index);
        SBE(attachRequest_set_pid)(&req, client->pid);
        SBE(attachRequest_set_dataRegionBytes)(&req, (int64_t)client->data_region_bytes);
        SBE(attachRequest_put_clientName)(&req, name, (uint16_t)name_length);
        const int32_t length = (int32_t)(SBE(messageHeader_encoded_length)() + SBE(attachRequest_encoded_length)(&req));
        pthread_mutex_lock(&client->lock);
        p = claim_pending(client, 0);
        p->correlation_id = correlation_id;
        status = send_locked(client, SBE(attachRequest_sbe_template_id)(), length, 0, deadline);
        okv_result result;
        if (status == OKV_OK)
        {
            status = await_locked(client, p, deadline, 0, &result);
        }
        else
        {
            p->in_use = 0;
        }
        pthread_mutex_unlock(&client->lock);
        if (status == OKV_OK)
        {
            client->client_id = result.value;
            const int fd = open(result.message, O_RDWR | O_CLOEXEC);
            struct stat st;
            if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size < client->data_region_bytes)
            {
                status = fail(client, OKV_E_SYSTEM, "cannot open data region %s", result.message);
            }
            else
            {
                void *region = mmap(NULL, client->data_region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (region == MAP_FAILED)
                {
                    status = fail(client, OKV_E_SYSTEM, "mmap data region: %s", strerror(errno));
                }
                else
                {
                    client->data_region = region;
                }
            }
            if (fd >= 0)
            {
                close(fd);
            }
            if (status == OKV_OK && read_i32(client->cnc + CNC_POOL_ACCESS_OFFSET) == CNC_POOL_ACCESS_WRITE_RESERVED)
            {
                status = map_pool(client, dir);
            }
            client->attached = 1;
        }
        else if (status > 0)
        {
            fail(client, status, "Manager refused attach of '%s': %s %s", name, okv_strerror(status), result.message);
        }
        if (status != OKV_OK && !client->attached)
        {
            free_claim(client);
        }
    }
    if (status == OKV_OK)
    {
        client->heartbeat_interval_ms = options->heartbeat_interval_ms > 0 ? options->heartbeat_interval_ms :
            (client->client_liveness_ms / 5 > 1000 ? 1000 : (client->client_liveness_ms / 5 < 1 ? 1 : client->client_liveness_ms / 5));
        client->last_heartbeat_ms = epoch_ms();
        if (options->heartbeat_thread)
        {
            if (pthread_create(&client->heartbeat_thread, NULL, heartbeat_main, client) == 0)
            {
                client->heartbeat_running = 1;
            }
            else
            {
                status = fail(client, OKV_E_SYSTEM, "cannot start the heartbeat thread");
            }
        }
    }
    if (status != OKV_OK)
    {
        snprintf(open_error, sizeof(open_error), "%s", client->last_error);
        if (client->attached)
        {
            okv_close(client);
            return status;
        }
        unmap_all(client);
        pthread_mutex_destroy(&client->lock);
        pthread_mutex_destroy(&client->heartbeat_lock);
        pthread_cond_destroy(&client->heartbeat_cond);
        free(client);
        return status;
    }
    *out = client;
    return OKV_OK;
}

int okv_close(okv_client *client)
{
    if (client == NULL)
    {
        return OKV_E_INVALID_ARGUMENT;
    }
    int status = OKV_OK;
    if (client->heartbeat_running)
    {
        pthread_mutex_lock(&client->heartbeat_lock);
        client->heartbeat_stop = 1;
        pthread_cond_signal(&client->heartbeat_cond);
        pthread_mutex_unlock(&client->heartbeat_lock);
        pthread_join(client->heartbeat_thread, NULL);
        client->heartbeat_running = 0;
    }
    pthread_mutex_lock(&client->lock);
    if (client->attached && manager_alive(client) && owns_slot(client))
    {
        struct SBE(messageHeader) hdr;
        struct SBE(detachRequest) req;
        const int64_t correlation_id = ring_next_correlation_id(&client->request_ring);
        SBE(detachRequest_wrap_and_apply_header)(&req, (char *)client->send_buffer, 0, sizeof(client->send_buffer), &hdr);
        SBE(detachRequest_set_clientId)(&req, client->client_id);
        SBE(detachRequest_set_correlationId)(&req, correlation_id);
        const int32_t length = (int32_t)(SBE(messageHeader_encoded_length)() + SBE(detachRequest_encoded_length)(&req));
        pending *p = claim_pending(client, 0);
        if (p != NULL)
        {
            p->correlation_id = correlation_id;
            const int64_t deadline = mono_ns() + client->response_timeout_ms * 1000000LL;
            status = send_locked(client, SBE(detachRequest_sbe_template_id)(), length, 0, deadline);
            if (status == OKV_OK)
            {
                status = await_locked(client, p, deadline, 0, NULL);
            }
            else
            {
                p->in_use = 0;
            }
        }
    }
    client->attached = 0;
    pthread_mutex_unlock(&client->lock);
    unmap_all(client);
    pthread_mutex_destroy(&client->lock);
    pthread_mutex_destroy(&client->heartbeat_lock);
    pthread_cond_destroy(&client->heartbeat_cond);
    free(client);
    return status;
}
