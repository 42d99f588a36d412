package io.orbitkv.ffm.te;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Hand-written bindings, in the shape jextract generates, for the part of the Mooncake Transfer Engine C API
 * ({@code transfer_engine_c.h}) that OrbitKV uses, on LP64. The library is not on the default lookup path: it is
 * loaded from a path given at run time with {@link #load}, and every method handle is linked once there, so a
 * missing library or symbol fails at start-up with a {@link TransferEngineException} that names it.
 *
 * <p>The C wrappers of the library do not catch C++ exceptions; one escaping into a downcall ends the JVM. So every
 * wrapper here checks, before the downcall, what would make the library throw or abort: NULL strings and handles,
 * an unknown metadata scheme, a port out of range, buffers shorter than the length passed. Those checks throw
 * {@link IllegalArgumentException} (or {@link TransferEngineException} for a metadata string) and allocate nothing
 * unless they throw.
 *
 * <p>Two error conventions: {@code submitTransfer}, {@code getTransferStatus} and {@code freeBatchID} return the
 * positive {@code RC_*} status codes; the other int functions return 0 or a negative {@code ERR_*}.
 * {@code enableGracefulShutdown} is deliberately not bound: it installs SIGTERM/SIGINT handlers that would take
 * the JVM's.
 */
@SuppressWarnings("restricted") // binding native code is this class's purpose; JVMs run with native access
public final class TransferEngineC
{
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_SIZE_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong C_UINT64 = ValueLayout.JAVA_LONG;

    /** {@code LOCAL_SEGMENT}: the segment id of this engine's own memory. */
    public static final int LOCAL_SEGMENT = 0;
    /** {@code INVALID_BATCH} ({@code UINT64_MAX}): what {@code allocateBatchID} returns on failure. */
    public static final long INVALID_BATCH = -1L;

    public static final int OPCODE_READ = 0;
    public static final int OPCODE_WRITE = 1;

    // Task states reported in struct transfer_status.
    public static final int STATUS_WAITING = 0;
    public static final int STATUS_PENDING = 1;
    public static final int STATUS_INVALID = 2;
    public static final int STATUS_CANCELED = 3;
    public static final int STATUS_COMPLETED = 4;
    public static final int STATUS_TIMEOUT = 5;
    public static final int STATUS_FAILED = 6;

    // Positive status codes of submitTransfer, getTransferStatus and freeBatchID.
    public static final int RC_OK = 0;
    public static final int RC_INVALID_ARGUMENT = 1;
    public static final int RC_TOO_MANY_REQUESTS = 2;
    /** freeBatchID: a task of the batch was not yet polled to COMPLETED or FAILED. */
    public static final int RC_BATCH_BUSY = 4;
    public static final int RC_TRANSPORT_UNSUPPORTED = 8;

    // Negative codes of the other int functions (error.h).
    public static final int ERR_INVALID_ARGUMENT = -1;
    public static final int ERR_TOO_MANY_REQUESTS = -2;
    public static final int ERR_ADDRESS_NOT_REGISTERED = -3;
    public static final int ERR_BATCH_BUSY = -4;
    public static final int ERR_DEVICE_NOT_FOUND = -6;
    public static final int ERR_ADDRESS_OVERLAPPED = -7;
    public static final int ERR_DNS = -101;
    public static final int ERR_SOCKET = -102;
    public static final int ERR_MALFORMED_JSON = -103;
    public static final int ERR_REJECT_HANDSHAKE = -104;
    public static final int ERR_METADATA = -200;
    public static final int ERR_ENDPOINT = -201;
    public static final int ERR_CONTEXT = -202;
    public static final int ERR_NUMA = -300;
    public static final int ERR_CLOCK = -301;
    public static final int ERR_MEMORY = -302;
    public static final int ERR_NOT_IMPLEMENTED = -303;

    /** Metadata string selecting peer-to-peer handshakes: no metadata server, each engine serves its descriptor. */
    public static final String METADATA_P2P_HANDSHAKE = "P2PHANDSHAKE";
    /** Prefixes of the metadata servers the library knows; any other string aborts the process inside it. */
    public static final String[] METADATA_SCHEMES = {"etcd://", "redis://", "http://"};

    /** Longest C string the checks read (a metadata string, a segment name). */
    public static final int MAX_STRING_BYTES = 4096;
    /** Largest {@code rpc_port}. */
    public static final long MAX_RPC_PORT = 65535;

    private static final Linker LINKER = Linker.nativeLinker();

    private final Path library;
    private final MethodHandle createTransferEngine;
    private final MethodHandle installTransport;
    private final MethodHandle uninstallTransport;
    private final MethodHandle getLocalIpAndPort;
    private final MethodHandle openSegment;
    private final MethodHandle closeSegment;
    private final MethodHandle registerLocalMemory;
    private final MethodHandle unregisterLocalMemory;
    private final MethodHandle allocateBatchID;
    private final MethodHandle submitTransfer;
    private final MethodHandle getTransferStatus;
    private final MethodHandle freeBatchID;
    private final MethodHandle destroyTransferEngine;

    private TransferEngineC(final Path library, final SymbolLookup lookup)
    {
        this.library = library;
        createTransferEngine = link(lookup, "createTransferEngine", FunctionDescriptor.of(
            C_POINTER, C_POINTER, C_POINTER, C_POINTER, C_UINT64, C_INT));
        installTransport = link(lookup, "installTransport", FunctionDescriptor.of(
            C_POINTER, C_POINTER, C_POINTER, C_POINTER));
        uninstallTransport = link(lookup, "uninstallTransport", FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER));
        getLocalIpAndPort = link(lookup, "getLocalIpAndPort", FunctionDescriptor.of(
            C_INT, C_POINTER, C_POINTER, C_SIZE_T));
        openSegment = link(lookup, "openSegment", FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER));
        closeSegment = link(lookup, "closeSegment", FunctionDescriptor.of(C_INT, C_POINTER, C_INT));
        registerLocalMemory = link(lookup, "registerLocalMemory", FunctionDescriptor.of(
            C_INT, C_POINTER, C_POINTER, C_SIZE_T, C_POINTER, C_INT));
        unregisterLocalMemory = link(lookup, "unregisterLocalMemory", FunctionDescriptor.of(
            C_INT, C_POINTER, C_POINTER));
        allocateBatchID = link(lookup, "allocateBatchID", FunctionDescriptor.of(C_UINT64, C_POINTER, C_SIZE_T));
        submitTransfer = link(lookup, "submitTransfer", FunctionDescriptor.of(
            C_INT, C_POINTER, C_UINT64, C_POINTER, C_SIZE_T));
        getTransferStatus = link(lookup, "getTransferStatus", FunctionDescriptor.of(
            C_INT, C_POINTER, C_UINT64, C_SIZE_T, C_POINTER));
        freeBatchID = link(lookup, "freeBatchID", FunctionDescriptor.of(C_INT, C_POINTER, C_UINT64));
        destroyTransferEngine = link(lookup, "destroyTransferEngine", FunctionDescriptor.ofVoid(C_POINTER));
    }

    /**
     * Load the library at {@code library} and link every bound function.
     *
     * @param library path of {@code libtransfer_engine.so} (or a library implementing the same ABI).
     * @param arena   keeps the library loaded until it closes; close it only after every engine was destroyed.
     * @return the bindings.
     * @throws TransferEngineException when the file is missing, cannot be loaded, or lacks a bound symbol.
     */
    public static TransferEngineC load(final Path library, final Arena arena)
    {
        if (null == library)
        {
            throw new TransferEngineException("no Transfer Engine library given (path of libtransfer_engine.so)");
        }
        if (!Files.isRegularFile(library))
        {
            throw new TransferEngineException("Transfer Engine library not found: " + library.toAbsolutePath());
        }

        final SymbolLookup lookup;
        try
        {
            lookup = SymbolLookup.libraryLookup(library, arena);
        }
        catch (final IllegalArgumentException | IllegalStateException ex)
        {
            throw new TransferEngineException(
                "cannot load the Transfer Engine library " + library.toAbsolutePath() + ": " + ex.getMessage(), ex);
        }
        return new TransferEngineC(library, lookup);
    }

    /**
     * @return the path the library was loaded from.
     */
    public Path library()
    {
        return library;
    }

    /**
     * Refuse a metadata connection string the library would abort on.
     *
     * @param metadataConnection {@link #METADATA_P2P_HANDSHAKE} or one of {@link #METADATA_SCHEMES} followed by an
     *                           address.
     * @throws TransferEngineException naming the accepted forms otherwise.
     */
    public static void checkMetadataConnection(final String metadataConnection)
    {
        if (METADATA_P2P_HANDSHAKE.equals(metadataConnection))
        {
            return;
        }
        if (null != metadataConnection)
        {
            for (final String scheme : METADATA_SCHEMES)
            {
                if (metadataConnection.startsWith(scheme) && metadataConnection.length() > scheme.length())
                {
                    return;
                }
            }
        }
        throw new TransferEngineException("unsupported Transfer Engine metadata connection '" + metadataConnection +
            "': use P2PHANDSHAKE, etcd://host:port, redis://host:port or http://host:port/metadata");
    }

    /**
     * {@code transfer_engine_t createTransferEngine(const char *metadata_conn_string, const char *local_server_name,
     * const char *ip_or_host_name, uint64_t rpc_port, int auto_discover)}.
     *
     * @param metadataConnection NUL-terminated metadata string, checked with {@link #checkMetadataConnection}.
     * @param localServerName    NUL-terminated name of this engine (P2PHANDSHAKE names it "ip:port" instead).
     * @param ipOrHost           NUL-terminated address the engine binds and announces.
     * @param rpcPort            handshake port, 0 to let the library pick one.
     * @param autoDiscover       non-zero installs the transports the topology suggests; 0 installs none.
     * @return the engine handle, {@link MemorySegment#NULL} on failure.
     */
    public MemorySegment createTransferEngine(
        final MemorySegment metadataConnection,
        final MemorySegment localServerName,
        final MemorySegment ipOrHost,
        final long rpcPort,
        final int autoDiscover)
    {
        checkMetadataConnection(readString(metadataConnection, "metadata_conn_string"));
        requireNonNull(localServerName, "local_server_name");
        requireNonNull(ipOrHost, "ip_or_host_name");
        if (rpcPort < 0 || rpcPort > MAX_RPC_PORT)
        {
            throw new IllegalArgumentException("rpc_port out of range [0, " + MAX_RPC_PORT + "]: " + rpcPort);
        }
        try
        {
            return (MemorySegment)createTransferEngine.invokeExact(
                metadataConnection, localServerName, ipOrHost, rpcPort, autoDiscover);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code transport_t installTransport(transfer_engine_t engine, const char *proto, void **args)}.
     *
     * @param engine handle from {@link #createTransferEngine}.
     * @param proto  NUL-terminated protocol name, e.g. "tcp".
     * @param args   protocol arguments, {@link MemorySegment#NULL} for none.
     * @return the transport, {@link MemorySegment#NULL} on failure.
     */
    public MemorySegment installTransport(final MemorySegment engine, final MemorySegment proto, final MemorySegment args)
    {
        requireEngine(engine);
        requireNonNull(proto, "proto");
        try
        {
            return (MemorySegment)installTransport.invokeExact(engine, proto, args);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int uninstallTransport(transfer_engine_t engine, const char *proto)}.
     *
     * @return 0 or a negative {@code ERR_*}.
     */
    public int uninstallTransport(final MemorySegment engine, final MemorySegment proto)
    {
        requireEngine(engine);
        requireNonNull(proto, "proto");
        try
        {
            return (int)uninstallTransport.invokeExact(engine, proto);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int getLocalIpAndPort(transfer_engine_t engine, char *buf_out, size_t buf_len)}: the segment name a
     * peer opens to reach this engine.
     *
     * @param buffer receives the NUL-terminated "ip:port"; at least {@code length} bytes.
     * @param length of the buffer passed to the library.
     * @return 0 or a negative {@code ERR_*}.
     */
    public int getLocalIpAndPort(final MemorySegment engine, final MemorySegment buffer, final long length)
    {
        requireEngine(engine);
        requireBytes(buffer, length, "buf_out");
        if (length <= 0)
        {
            throw new IllegalArgumentException("buf_len must be positive: " + length);
        }
        try
        {
            return (int)getLocalIpAndPort.invokeExact(engine, buffer, length);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code segment_id_t openSegment(transfer_engine_t engine, const char *segment_name)}; the library caches the
     * id of a name.
     *
     * @param name NUL-terminated segment name ("ip:port" under P2PHANDSHAKE).
     * @return a segment id {@code >= 1}, or -1 when the segment cannot be opened.
     */
    public int openSegment(final MemorySegment engine, final MemorySegment name)
    {
        requireEngine(engine);
        requireNonNull(name, "segment_name");
        try
        {
            return (int)openSegment.invokeExact(engine, name);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int closeSegment(transfer_engine_t engine, segment_id_t segment_id)}.
     *
     * @return 0 or a negative {@code ERR_*}.
     */
    public int closeSegment(final MemorySegment engine, final int segmentId)
    {
        requireEngine(engine);
        try
        {
            return (int)closeSegment.invokeExact(engine, segmentId);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int registerLocalMemory(transfer_engine_t engine, void *addr, size_t length, const char *location,
     * int remote_accessible)}.
     *
     * @param address          start of the range.
     * @param length           of the range, bytes.
     * @param location         NUL-terminated placement, e.g. "cpu:0", or "*" to let the library find it.
     * @param remoteAccessible non-zero lets peers read and write the range.
     * @return 0 or a negative {@code ERR_*}.
     */
    public int registerLocalMemory(
        final MemorySegment engine,
        final long address,
        final long length,
        final MemorySegment location,
        final int remoteAccessible)
    {
        requireEngine(engine);
        requireNonNull(location, "location");
        if (0 == address || length <= 0)
        {
            throw new IllegalArgumentException("registerLocalMemory: address " + address + ", length " + length);
        }
        try
        {
            return (int)registerLocalMemory.invokeExact(
                engine, MemorySegment.ofAddress(address), length, location, remoteAccessible);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int unregisterLocalMemory(transfer_engine_t engine, void *addr)}.
     *
     * @param address start of a registered range.
     * @return 0 or a negative {@code ERR_*}.
     */
    public int unregisterLocalMemory(final MemorySegment engine, final long address)
    {
        requireEngine(engine);
        try
        {
            return (int)unregisterLocalMemory.invokeExact(engine, MemorySegment.ofAddress(address));
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code batch_id_t allocateBatchID(transfer_engine_t engine, size_t batch_size)}.
     *
     * @param batchSize most tasks the batch takes, {@code >= 1}.
     * @return the batch id, {@link #INVALID_BATCH} on failure.
     */
    public long allocateBatchID(final MemorySegment engine, final long batchSize)
    {
        requireEngine(engine);
        if (batchSize <= 0)
        {
            throw new IllegalArgumentException("batch_size must be positive: " + batchSize);
        }
        try
        {
            return (long)allocateBatchID.invokeExact(engine, batchSize);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int submitTransfer(transfer_engine_t engine, batch_id_t batch_id, struct transfer_request *entries,
     * size_t count)}: appends {@code count} tasks to the batch, numbered on from the tasks already submitted.
     *
     * @param entries at least {@code count} {@link TransferRequest} structs.
     * @return one of the {@code RC_*} codes.
     */
    public int submitTransfer(final MemorySegment engine, final long batchId, final MemorySegment entries, final long count)
    {
        requireEngine(engine);
        if (count <= 0)
        {
            throw new IllegalArgumentException("count must be positive: " + count);
        }
        requireBytes(entries, count * TransferRequest.sizeof(), "entries");
        try
        {
            return (int)submitTransfer.invokeExact(engine, batchId, entries, count);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int getTransferStatus(transfer_engine_t engine, batch_id_t batch_id, size_t task_id,
     * struct transfer_status *status)}. Polling a task to COMPLETED or FAILED is what lets its batch be freed.
     *
     * @param status a {@link TransferStatusStruct} that receives the task's state.
     * @return one of the {@code RC_*} codes.
     */
    public int getTransferStatus(final MemorySegment engine, final long batchId, final long taskId, final MemorySegment status)
    {
        requireEngine(engine);
        if (taskId < 0)
        {
            throw new IllegalArgumentException("task_id must not be negative: " + taskId);
        }
        requireBytes(status, TransferStatusStruct.sizeof(), "status");
        try
        {
            return (int)getTransferStatus.invokeExact(engine, batchId, taskId, status);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code int freeBatchID(transfer_engine_t engine, batch_id_t batch_id)}.
     *
     * @return {@link #RC_OK}, or {@link #RC_BATCH_BUSY} while a task was not polled to a final state.
     */
    public int freeBatchID(final MemorySegment engine, final long batchId)
    {
        requireEngine(engine);
        try
        {
            return (int)freeBatchID.invokeExact(engine, batchId);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code void destroyTransferEngine(transfer_engine_t engine)}: stops the engine's threads and frees it.
     */
    public void destroyTransferEngine(final MemorySegment engine)
    {
        requireEngine(engine);
        try
        {
            destroyTransferEngine.invokeExact(engine);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * @param code a negative {@code ERR_*} or a positive {@code RC_*} value.
     * @return its name, for error messages.
     */
    public static String describe(final int code)
    {
        return switch (code)
        {
            case 0 -> "OK";
            case RC_INVALID_ARGUMENT -> "RC_INVALID_ARGUMENT";
            case RC_TOO_MANY_REQUESTS -> "RC_TOO_MANY_REQUESTS";
            case RC_BATCH_BUSY -> "RC_BATCH_BUSY";
            case RC_TRANSPORT_UNSUPPORTED -> "RC_TRANSPORT_UNSUPPORTED";
            case ERR_INVALID_ARGUMENT -> "ERR_INVALID_ARGUMENT";
            case ERR_TOO_MANY_REQUESTS -> "ERR_TOO_MANY_REQUESTS";
            case ERR_ADDRESS_NOT_REGISTERED -> "ERR_ADDRESS_NOT_REGISTERED";
            case ERR_BATCH_BUSY -> "ERR_BATCH_BUSY";
            case ERR_DEVICE_NOT_FOUND -> "ERR_DEVICE_NOT_FOUND";
            case ERR_ADDRESS_OVERLAPPED -> "ERR_ADDRESS_OVERLAPPED";
            case ERR_DNS -> "ERR_DNS";
            case ERR_SOCKET -> "ERR_SOCKET";
            case ERR_MALFORMED_JSON -> "ERR_MALFORMED_JSON";
            case ERR_REJECT_HANDSHAKE -> "ERR_REJECT_HANDSHAKE";
            case ERR_METADATA -> "ERR_METADATA";
            case ERR_ENDPOINT -> "ERR_ENDPOINT";
            case ERR_CONTEXT -> "ERR_CONTEXT";
            case ERR_NUMA -> "ERR_NUMA";
            case ERR_CLOCK -> "ERR_CLOCK";
            case ERR_MEMORY -> "ERR_MEMORY";
            case ERR_NOT_IMPLEMENTED -> "ERR_NOT_IMPLEMENTED";
            default -> "code " + code;
        };
    }

    private MethodHandle link(final SymbolLookup lookup, final String symbol, final FunctionDescriptor descriptor)
    {
        final Optional<MemorySegment> address = lookup.find(symbol);
        if (address.isEmpty())
        {
            throw new TransferEngineException(
                "Transfer Engine library " + library.toAbsolutePath() + " has no symbol " + symbol);
        }
        return LINKER.downcallHandle(address.get(), descriptor);
    }

    private static String readString(final MemorySegment string, final String name)
    {
        requireNonNull(string, name);
        final MemorySegment bounded = string.byteSize() > 0 ? string : string.reinterpret(MAX_STRING_BYTES);
        return bounded.getString(0);
    }

    private static void requireEngine(final MemorySegment engine)
    {
        if (null == engine || 0 == engine.address())
        {
            throw new IllegalArgumentException("NULL transfer engine handle");
        }
    }

    private static void requireNonNull(final MemorySegment pointer, final String name)
    {
        if (null == pointer || 0 == pointer.address())
        {
            throw new IllegalArgumentException(name + " must not be NULL");
        }
    }

    private static void requireBytes(final MemorySegment segment, final long bytes, final String name)
    {
        requireNonNull(segment, name);
        if (segment.byteSize() < bytes)
        {
            throw new IllegalArgumentException(name + " holds " + segment.byteSize() + " bytes, needs " + bytes);
        }
    }

    private static RuntimeException rethrow(final Throwable ex)
    {
        // invokeExact declares Throwable; what a downcall can really throw is unchecked (e.g. a closed arena).
        if (ex instanceof RuntimeException runtimeException)
        {
            return runtimeException;
        }
        if (ex instanceof Error error)
        {
            throw error;
        }
        return new IllegalStateException("unexpected checked exception from a downcall", ex);
    }
}
