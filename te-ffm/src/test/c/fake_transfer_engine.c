/*
 * TEST STAND-IN, NOT MOONCAKE. A small C library that implements the subset of the Mooncake Transfer Engine C ABI
 * (transfer_engine_c.h) OrbitKV binds, with the TCP transport's semantics over loopback, so that the Java binding
 * and MooncakeTransport can be tested on machines where the real libtransfer_engine.so cannot be installed. It is
 * written from the ABI's documented behaviour only and shares no code with Mooncake.
 *
 * What it does:
 * - metadata "P2PHANDSHAKE" only (no metadata server); "etcd://", "redis://", "http://" fail with NULL because no
 *   server exists here; any other scheme aborts the process, as the real library does;
 * - each engine listens on its rpc port (0 picks a free one) from creation: a handshake from openSegment is always
 *   answered, reads and writes only once "tcp" is installed (auto_discover != 0 installs it, 0 installs nothing);
 * - getLocalIpAndPort gives "host:port", the segment name a peer opens; openSegment("host:port") handshakes and
 *   returns an id >= 1 (the same id for the same name), -1 when the peer does not answer;
 * - registerLocalMemory records ranges; a READ opens a fresh connection to the target, sends {size, addr, opcode},
 *   the target checks the range lies inside one registered range, replies and streams the bytes in 64 KiB slices;
 *   a WRITE is acknowledged once its bytes landed;
 * - a task is WAITING until a worker takes it, PENDING while it moves, then COMPLETED or FAILED;
 * - submitTransfer, getTransferStatus and freeBatchID return the positive status codes (0 ok, 1 invalid argument,
 *   2 too many requests, 4 batch busy, 8 transport not supported); the other int functions return negative ERR_*;
 * - freeBatchID returns 4 until every task of the batch was polled to COMPLETED or FAILED.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define OPCODE_READ 0
#define OPCODE_WRITE 1
#define OPCODE_HANDSHAKE 2

#define STATUS_WAITING 0
#define STATUS_PENDING 1
#define STATUS_COMPLETED 4
#define STATUS_FAILED 6

#define RC_OK 0
#define RC_INVALID_ARGUMENT 1
#define RC_TOO_MANY_REQUESTS 2
#define RC_BATCH_BUSY 4
#define RC_TRANSPORT_UNSUPPORTED 8

#define ERR_INVALID_ARGUMENT (-1)
#define ERR_TOO_MANY_REQUESTS (-2)
#define ERR_ADDRESS_NOT_REGISTERED (-3)
#define ERR_ADDRESS_OVERLAPPED (-7)

#define MAX_RANGES 256
#define MAX_SEGMENTS 256
#define MAX_SEGMENT_NAME 256
#define MAX_BATCHES 4096
#define MAX_BATCH_SIZE 4096
#define SLICE_BYTES (64 * 1024)
#define SOCKET_TIMEOUT_S 5

struct transfer_request
{
    int opcode;
    void *source;
    int32_t target_id;
    uint32_t file_id;
    uint64_t target_offset;
    uint64_t length;
};

struct transfer_status
{
    int status;
    uint64_t transferred_bytes;
};

struct task
{
    struct transfer_request request;
    int status;
    uint64_t transferred;
    int polled_terminal;
    struct task *next;
};

struct batch
{
    int in_use;
    uint32_t generation;
    size_t capacity;
    size_t count;
    struct task *tasks;
};

struct range
{
    uintptr_t addr;
    size_t length;
};

struct engine
{
    char host[128];
    int port;
    int listen_fd;
    int tcp_installed;
    int stopping;
    pthread_mutex_t lock;
    pthread_cond_t work;
    pthread_t server;
    pthread_t worker;
    struct range ranges[MAX_RANGES];
    int range_count;
    char segments[MAX_SEGMENTS][MAX_SEGMENT_NAME];
    int segment_count;
    struct batch batches[MAX_BATCHES];
    struct task *queue_head;
    struct task *queue_tail;
};

static int write_fully(const int fd, const void *buffer, const size_t length)
{
    const char *p = buffer;
    size_t done = 0;
    while (done < length)
    {
        const ssize_t n = send(fd, p + done, length - done, MSG_NOSIGNAL);
        if (n <= 0)
        {
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static int read_fully(const int fd, void *buffer, const size_t length)
{
    char *p = buffer;
    size_t done = 0;
    while (done < length)
    {
        const ssize_t n = recv(fd, p + done, length - done, 0);
        if (n <= 0)
        {
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static void set_timeouts(const int fd)
{
    struct timeval timeout = { SOCKET_TIMEOUT_S, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Header on the wire: size (8 bytes), addr (8 bytes), opcode (1 byte), host byte order: loopback only. */
struct wire_header
{
    uint64_t size;
    uint64_t addr;
    uint8_t opcode;
} __attribute__((packed));

static int range_registered(struct engine *engine, const uint64_t addr, const uint64_t size)
{
    int found = 0;
    pthread_mutex_lock(&engine->lock);
    for (int i = 0; i < engine->range_count; i++)
    {
        const struct range *r = &engine->ranges[i];
        if (addr >= r->addr && size <= r->length && addr - r->addr <= r->length - size)
        {
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&engine->lock);
    return found;
}

static void serve_connection(struct engine *engine, const int fd)
{
    struct wire_header header;
    if (read_fully(fd, &header, sizeof(header)) != 0)
    {
        return;
    }

    uint8_t reply = 0;
    if (header.opcode == OPCODE_HANDSHAKE)
    {
        write_fully(fd, &reply, 1);
        return;
    }

    pthread_mutex_lock(&engine->lock);
    const int tcp = engine->tcp_installed;
    pthread_mutex_unlock(&engine->lock);
    const int valid = (header.opcode == OPCODE_READ || header.opcode == OPCODE_WRITE) && header.size > 0;
    reply = (tcp && valid && range_registered(engine, header.addr, header.size)) ? 0 : 1;
    if (write_fully(fd, &reply, 1) != 0 || reply != 0)
    {
        return;
    }

    char *memory = (char *)(uintptr_t)header.addr;
    for (uint64_t done = 0; done < header.size;)
    {
        const uint64_t slice = header.size - done < SLICE_BYTES ? header.size - done : SLICE_BYTES;
        const int rc = header.opcode == OPCODE_READ ?
            write_fully(fd, memory + done, slice) : read_fully(fd, memory + done, slice);
        if (rc != 0)
        {
            return;
        }
        done += slice;
    }
    if (header.opcode == OPCODE_WRITE)
    {
        write_fully(fd, &reply, 1);
    }
}

static void *server_main(void *arg)
{
    struct engine *engine = arg;
    for (;;)
    {
        const int fd = accept(engine->listen_fd, NULL, NULL);
        pthread_mutex_lock(&engine->lock);
        const int stopping = engine->stopping;
        pthread_mutex_unlock(&engine->lock);
        if (stopping)
        {
            if (fd >= 0)
            {
                close(fd);
            }
            return NULL;
        }
        if (fd < 0)
        {
            continue;
        }
        set_timeouts(fd);
        serve_connection(engine, fd);
        close(fd);
    }
}

/* Splits "host:port"; returns 0 and fills host and port, -1 when malformed. */
static int parse_segment_name(const char *name, char *host, const size_t host_len, char *port, const size_t port_len)
{
    const char *colon = strrchr(name, ':');
    if (colon == NULL || colon == name || (size_t)(colon - name) >= host_len || colon[1] == '\0' ||
        strlen(colon + 1) >= port_len)
    {
        return -1;
    }
    for (const char *p = colon + 1; *p != '\0'; p++)
    {
        if (*p < '0' || *p > '9')
        {
            return -1;
        }
    }
    memcpy(host, name, (size_t)(colon - name));
    host[colon - name] = '\0';
    strcpy(port, colon + 1);
    return 0;
}

static int connect_to(const char *segment_name)
{
    char host[MAX_SEGMENT_NAME];
    char port[16];
    if (parse_segment_name(segment_name, host, sizeof(host), port, sizeof(port)) != 0)
    {
        return -1;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *address = NULL;
    if (getaddrinfo(host, port, &hints, &address) != 0 || address == NULL)
    {
        return -1;
    }
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
    {
        freeaddrinfo(address);
        return -1;
    }
    set_timeouts(fd);
    const int rc = connect(fd, address->ai_addr, address->ai_addrlen);
    freeaddrinfo(address);
    if (rc != 0)
    {
        close(fd);
        return -1;
    }
    return fd;
}

static int run_task(struct engine *engine, struct task *task)
{
    char name[MAX_SEGMENT_NAME];
    pthread_mutex_lock(&engine->lock);
    strcpy(name, engine->segments[task->request.target_id - 1]);
    pthread_mutex_unlock(&engine->lock);

    const int fd = connect_to(name);
    if (fd < 0)
    {
        return -1;
    }
    struct wire_header header = { task->request.length, task->request.target_offset, (uint8_t)task->request.opcode };
    uint8_t reply = 1;
    int rc = write_fully(fd, &header, sizeof(header)) == 0 && read_fully(fd, &reply, 1) == 0 && reply == 0 ? 0 : -1;
    char *local = task->request.source;
    for (uint64_t done = 0; rc == 0 && done < task->request.length;)
    {
        const uint64_t slice = task->request.length - done < SLICE_BYTES ? task->request.length - done : SLICE_BYTES;
        rc = task->request.opcode == OPCODE_READ ?
            read_fully(fd, local + done, slice) : write_fully(fd, local + done, slice);
        if (rc == 0)
        {
            done += slice;
            __atomic_store_n(&task->transferred, done, __ATOMIC_RELEASE);
        }
    }
    if (rc == 0 && task->request.opcode == OPCODE_WRITE)
    {
        rc = read_fully(fd, &reply, 1) == 0 && reply == 0 ? 0 : -1;
    }
    close(fd);
    return rc;
}

static void *worker_main(void *arg)
{
    struct engine *engine = arg;
    for (;;)
    {
        pthread_mutex_lock(&engine->lock);
        while (!engine->stopping && engine->queue_head == NULL)
        {
            pthread_cond_wait(&engine->work, &engine->lock);
        }
        struct task *task = engine->queue_head;
        if (task == NULL)
        {
            pthread_mutex_unlock(&engine->lock);
            return NULL;
        }
        engine->queue_head = task->next;
        if (engine->queue_head == NULL)
        {
            engine->queue_tail = NULL;
        }
        __atomic_store_n(&task->status, STATUS_PENDING, __ATOMIC_RELEASE);
        const int stopping = engine->stopping;
        pthread_mutex_unlock(&engine->lock);

        const int rc = stopping ? -1 : run_task(engine, task);
        __atomic_store_n(&task->status, rc == 0 ? STATUS_COMPLETED : STATUS_FAILED, __ATOMIC_RELEASE);
    }
}

void *createTransferEngine(
    const char *metadata_conn_string, const char *local_server_name, const char *ip_or_host_name,
    const uint64_t rpc_port, const int auto_discover)
{
    (void)local_server_name;
    if (metadata_conn_string == NULL || ip_or_host_name == NULL || rpc_port > 65535)
    {
        return NULL;
    }
    if (strcmp(metadata_conn_string, "P2PHANDSHAKE") != 0)
    {
        if (strncmp(metadata_conn_string, "etcd://", 7) == 0 || strncmp(metadata_conn_string, "redis://", 8) == 0 ||
            strncmp(metadata_conn_string, "http://", 7) == 0)
        {
            return NULL; /* no metadata server in this stand-in */
        }
        fprintf(stderr, "fake_transfer_engine: unsupported metadata protocol %s\n", metadata_conn_string);
        abort(); /* the real library throws out of a C wrapper here, which ends the process */
    }
    if (strlen(ip_or_host_name) >= sizeof(((struct engine *)0)->host))
    {
        return NULL;
    }

    struct engine *engine = calloc(1, sizeof(struct engine));
    if (engine == NULL)
    {
        return NULL;
    }
    strcpy(engine->host, ip_or_host_name);
    pthread_mutex_init(&engine->lock, NULL);
    pthread_cond_init(&engine->work, NULL);

    struct sockaddr_in address;
    memset(&address, 0, sizeof(address));
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)rpc_port);
    engine->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    socklen_t length = sizeof(address);
    if (engine->listen_fd < 0 || inet_pton(AF_INET, ip_or_host_name, &address.sin_addr) != 1 ||
        setsockopt(engine->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(engine->listen_fd, (struct sockaddr *)&address, sizeof(address)) != 0 ||
        listen(engine->listen_fd, 128) != 0 ||
        getsockname(engine->listen_fd, (struct sockaddr *)&address, &length) != 0)
    {
        if (engine->listen_fd >= 0)
        {
            close(engine->listen_fd);
        }
        free(engine);
        return NULL;
    }
    engine->port = ntohs(address.sin_port);
    engine->tcp_installed = auto_discover != 0;
    pthread_create(&engine->server, NULL, server_main, engine);
    pthread_create(&engine->worker, NULL, worker_main, engine);
    return engine;
}

void destroyTransferEngine(void *handle)
{
    struct engine *engine = handle;
    if (engine == NULL)
    {
        return;
    }
    pthread_mutex_lock(&engine->lock);
    engine->stopping = 1;
    pthread_cond_broadcast(&engine->work);
    pthread_mutex_unlock(&engine->lock);
    shutdown(engine->listen_fd, SHUT_RDWR);
    pthread_join(engine->server, NULL);
    pthread_join(engine->worker, NULL);
    close(engine->listen_fd);
    for (int i = 0; i < MAX_BATCHES; i++)
    {
        free(engine->batches[i].tasks);
    }
    pthread_cond_destroy(&engine->work);
    pthread_mutex_destroy(&engine->lock);
    free(engine);
}

void *installTransport(void *handle, const char *proto, void **args)
{
    (void)args;
    struct engine *engine = handle;
    if (engine == NULL || proto == NULL || strcmp(proto, "tcp") != 0)
    {
        return NULL;
    }
    pthread_mutex_lock(&engine->lock);
    engine->tcp_installed = 1;
    pthread_mutex_unlock(&engine->lock);
    return &engine->tcp_installed;
}

int uninstallTransport(void *handle, const char *proto)
{
    struct engine *engine = handle;
    if (engine == NULL || proto == NULL || strcmp(proto, "tcp") != 0)
    {
        return ERR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&engine->lock);
    engine->tcp_installed = 0;
    pthread_mutex_unlock(&engine->lock);
    return 0;
}

int getLocalIpAndPort(void *handle, char *buf_out, const size_t buf_len)
{
    struct engine *engine = handle;
    if (engine == NULL || buf_out == NULL)
    {
        return ERR_INVALID_ARGUMENT;
    }
    const int n = snprintf(buf_out, buf_len, "%s:%d", engine->host, engine->port);
    return n < 0 || (size_t)n >= buf_len ? ERR_INVALID_ARGUMENT : 0;
}

int32_t openSegment(void *handle, const char *segment_name)
{
    struct engine *engine = handle;
    if (engine == NULL || segment_name == NULL || strlen(segment_name) >= MAX_SEGMENT_NAME)
    {
        return -1;
    }
    pthread_mutex_lock(&engine->lock);
    for (int i = 0; i < engine->segment_count; i++)
    {
        if (strcmp(engine->segments[i], segment_name) == 0)
        {
            pthread_mutex_unlock(&engine->lock);
            return i + 1;
        }
    }
    pthread_mutex_unlock(&engine->lock);

    /* The handshake: the peer must answer before a segment id is handed out. */
    const int fd = connect_to(segment_name);
    if (fd < 0)
    {
        return -1;
    }
    struct wire_header header = { 0, 0, OPCODE_HANDSHAKE };
    uint8_t reply = 1;
    const int answered = write_fully(fd, &header, sizeof(header)) == 0 && read_fully(fd, &reply, 1) == 0 && reply == 0;
    close(fd);
    if (!answered)
    {
        return -1;
    }

    pthread_mutex_lock(&engine->lock);
    int id = -1;
    if (engine->segment_count < MAX_SEGMENTS)
    {
        strcpy(engine->segments[engine->segment_count], segment_name);
        id = ++engine->segment_count;
    }
    pthread_mutex_unlock(&engine->lock);
    return id;
}

int closeSegment(void *handle, const int32_t segment_id)
{
    (void)handle;
    (void)segment_id;
    return 0;
}

int registerLocalMemory(
    void *handle, void *addr, const size_t length, const char *location, const int remote_accessible)
{
    (void)location;
    (void)remote_accessible;
    struct engine *engine = handle;
    if (engine == NULL || addr == NULL || length == 0)
    {
        return ERR_INVALID_ARGUMENT;
    }
    const uintptr_t start = (uintptr_t)addr;
    int rc = 0;
    pthread_mutex_lock(&engine->lock);
    for (int i = 0; i < engine->range_count; i++)
    {
        const struct range *r = &engine->ranges[i];
        if (start < r->addr + r->length && r->addr < start + length)
        {
            rc = ERR_ADDRESS_OVERLAPPED;
        }
    }
    if (rc == 0 && engine->range_count == MAX_RANGES)
    {
        rc = ERR_TOO_MANY_REQUESTS;
    }
    if (rc == 0)
    {
        engine->ranges[engine->range_count].addr = start;
        engine->ranges[engine->range_count].length = length;
        engine->range_count++;
    }
    pthread_mutex_unlock(&engine->lock);
    return rc;
}

int unregisterLocalMemory(void *handle, void *addr)
{
    struct engine *engine = handle;
    if (engine == NULL)
    {
        return ERR_INVALID_ARGUMENT;
    }
    int rc = ERR_ADDRESS_NOT_REGISTERED;
    pthread_mutex_lock(&engine->lock);
    for (int i = 0; i < engine->range_count; i++)
    {
        if (engine->ranges[i].addr == (uintptr_t)addr)
        {
            engine->ranges[i] = engine->ranges[--engine->range_count];
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&engine->lock);
    return rc;
}

static struct batch *find_batch(struct engine *engine, const uint64_t batch_id)
{
    const uint64_t index = (batch_id & 0xffffffffu) - 1;
    if (index >= MAX_BATCHES)
    {
        return NULL;
    }
    struct batch *batch = &engine->batches[index];
    return batch->in_use && batch->generation == (uint32_t)(batch_id >> 32) ? batch : NULL;
}

uint64_t allocateBatchID(void *handle, const size_t batch_size)
{
    struct engine *engine = handle;
    if (engine == NULL || batch_size == 0 || batch_size > MAX_BATCH_SIZE)
    {
        return UINT64_MAX;
    }
    uint64_t id = UINT64_MAX;
    pthread_mutex_lock(&engine->lock);
    for (int i = 0; i < MAX_BATCHES; i++)
    {
        struct batch *batch = &engine->batches[i];
        if (!batch->in_use)
        {
            struct task *tasks = realloc(batch->tasks, batch_size * sizeof(struct task));
            if (tasks != NULL)
            {
                memset(tasks, 0, batch_size * sizeof(struct task));
                batch->tasks = tasks;
                batch->in_use = 1;
                batch->generation++;
                batch->capacity = batch_size;
                batch->count = 0;
                id = ((uint64_t)batch->generation << 32) | (uint64_t)(i + 1);
            }
            break;
        }
    }
    pthread_mutex_unlock(&engine->lock);
    return id;
}

int submitTransfer(void *handle, const uint64_t batch_id, struct transfer_request *entries, const size_t count)
{
    struct engine *engine = handle;
    if (engine == NULL || (entries == NULL && count > 0))
    {
        return RC_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&engine->lock);
    struct batch *batch = find_batch(engine, batch_id);
    int rc = RC_OK;
    if (batch == NULL)
    {
        rc = RC_INVALID_ARGUMENT;
    }
    else if (!engine->tcp_installed)
    {
        rc = RC_TRANSPORT_UNSUPPORTED;
    }
    else if (count > batch->capacity - batch->count)
    {
        rc = RC_TOO_MANY_REQUESTS;
    }
    for (size_t i = 0; rc == RC_OK && i < count; i++)
    {
        const struct transfer_request *r = &entries[i];
        if ((r->opcode != OPCODE_READ && r->opcode != OPCODE_WRITE) || r->source == NULL || r->length == 0 ||
            r->target_id < 1 || r->target_id > engine->segment_count)
        {
            rc = RC_INVALID_ARGUMENT;
        }
    }
    for (size_t i = 0; rc == RC_OK && i < count; i++)
    {
        struct task *task = &batch->tasks[batch->count++];
        task->request = entries[i];
        task->status = STATUS_WAITING;
        task->next = NULL;
        if (engine->queue_tail == NULL)
        {
            engine->queue_head = task;
        }
        else
        {
            engine->queue_tail->next = task;
        }
        engine->queue_tail = task;
    }
    if (rc == RC_OK)
    {
        pthread_cond_signal(&engine->work);
    }
    pthread_mutex_unlock(&engine->lock);
    return rc;
}

int getTransferStatus(void *handle, const uint64_t batch_id, const size_t task_id, struct transfer_status *status)
{
    struct engine *engine = handle;
    if (engine == NULL || status == NULL)
    {
        return RC_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&engine->lock);
    struct batch *batch = find_batch(engine, batch_id);
    int rc = RC_INVALID_ARGUMENT;
    if (batch != NULL && task_id < batch->count)
    {
        struct task *task = &batch->tasks[task_id];
        status->status = __atomic_load_n(&task->status, __ATOMIC_ACQUIRE);
        status->transferred_bytes = __atomic_load_n(&task->transferred, __ATOMIC_ACQUIRE);
        if (status->status == STATUS_COMPLETED || status->status == STATUS_FAILED)
        {
            task->polled_terminal = 1;
        }
        rc = RC_OK;
    }
    pthread_mutex_unlock(&engine->lock);
    return rc;
}

int freeBatchID(void *handle, const uint64_t batch_id)
{
    struct engine *engine = handle;
    if (engine == NULL)
    {
        return RC_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&engine->lock);
    struct batch *batch = find_batch(engine, batch_id);
    int rc = batch == NULL ? RC_INVALID_ARGUMENT : RC_OK;
    for (size_t i = 0; rc == RC_OK && i < batch->count; i++)
    {
        if (!batch->tasks[i].polled_terminal)
        {
            rc = RC_BATCH_BUSY;
        }
    }
    if (rc == RC_OK)
    {
        batch->in_use = 0;
    }
    pthread_mutex_unlock(&engine->lock);
    return rc;
}
