package io.orbitkv.manager.transfer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.transport.BuiltinTransport;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportException;
import io.orbitkv.transport.mooncake.MooncakeTransport;

import java.nio.file.Path;

/**
 * The default {@link TransportSupplier}: opens the transport {@code --transport} names, bound where
 * {@code --transfer-endpoint} says.
 */
public final class Transports implements TransportSupplier
{
    /**
     * @return an open transport; the caller closes it after the agent that uses it stopped.
     * @throws TransportException when it cannot be opened (bad endpoint, a library that does not load).
     */
    public Transport newTransport(final ManagerContext ctx)
    {
        final String endpoint = ctx.transferEndpoint();
        final int colon = endpoint.lastIndexOf(':');
        if (colon <= 0 || colon == endpoint.length() - 1)
        {
            throw new TransportException("--transfer-endpoint must be HOST:PORT: " + endpoint);
        }
        final String host = endpoint.substring(0, colon);
        final int port;
        try
        {
            port = Integer.parseInt(endpoint.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            throw new TransportException("--transfer-endpoint must be HOST:PORT: " + endpoint, ex);
        }
        if (port < 0 || port > 65_535)
        {
            throw new TransportException("--transfer-endpoint port must be 0..65535: " + endpoint);
        }
        if (Configuration.TransportKind.MOONCAKE == ctx.transport())
        {
            if (null != ctx.transportTls())
            {
                throw new IllegalArgumentException("--transport-tls-* apply to the builtin transport only, not to " +
                    "--transport mooncake");
            }
            return new MooncakeTransport(new MooncakeTransport.Context()
                .libraryPath(Path.of(ctx.teLibrary()))
                .host(host)
                .rpcPort(port));
        }
        final BuiltinTransport.Context builtin = new BuiltinTransport.Context();
        if (null != ctx.clusterSecret())
        {
            // Handshakes name the node (its id's hash) and this start of it (a random half), and prove the secret.
            final String nodeId = null == ctx.nodeId() ? "" : ctx.nodeId();
            final long nodeHash = ByteBuffer.wrap(sha256(nodeId.getBytes(StandardCharsets.UTF_8))).getLong();
            builtin.handshakeKey(ctx.clusterSecret().handshakeKey())
                .identity(nodeHash, new SecureRandom().nextLong());
        }
        return new BuiltinTransport(builtin
            .tls(ctx.transportTls())
            .bindHost(host)
            .port(port)
            .streamsPerPeer(ctx.transferStreams())
            .maxSessions(ctx.transferMaxSessions()));
    }

    private static byte[] sha256(final byte[] bytes)
    {
        try
        {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
