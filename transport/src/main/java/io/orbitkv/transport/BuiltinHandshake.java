package io.orbitkv.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The connection handshake of a transport that has a handshake key ({@link BuiltinTransport.Context#handshakeKey}):
 * both ends prove they hold the key, each over a fresh nonce of the other's, before any request is judged.
 * <pre>
 * requester to source  hello   (40 bytes): magic, version 1, flags AUTH, requester id (2 longs), nonce Nr (16)
 * source to requester  challenge (64):     nonce Ns (16), source id (2 longs), MAC("source", Nr, Ns, ids)
 * requester to source  proof   (32):       MAC("requester", Nr, Ns, ids)
 * </pre>
 * MAC is HMAC-SHA256 under the handshake key over a role label, both nonces and both ids, so a proof is good for one
 * connection only and cannot be reflected to the other side. The requester queues its requests behind the proof and
 * sends none before the source's MAC verified; the source judges none before the proof verified. A connection whose
 * handshake fails (wrong MAC, a peer without the key, a peer with a key talking to one without) is closed and counted
 * as {@code handshakes failed}. Runs on the I/O thread, at connect time only, so it may allocate.
 */
final class BuiltinHandshake
{
    static final short FLAG_AUTH = 1;
    static final int NONCE_BYTES = 16;
    static final int MAC_BYTES = 32;
    static final int HELLO_BYTES = BuiltinWire.HELLO_BYTES + 16 + NONCE_BYTES;
    static final int CHALLENGE_BYTES = NONCE_BYTES + 16 + MAC_BYTES;
    static final int PROOF_BYTES = MAC_BYTES;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final byte[] SOURCE_LABEL = {'s', 'o', 'u', 'r', 'c', 'e'};
    private static final byte[] REQUESTER_LABEL = {'r', 'e', 'q', 'u', 'e', 's', 't', 'e', 'r'};

    private final Mac mac;
    private final SecureRandom random = new SecureRandom();
    private final long idMsb;
    private final long idLsb;

    BuiltinHandshake(final byte[] key, final long idMsb, final long idLsb)
    {
        try
        {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        }
        catch (final GeneralSecurityException ex)
        {
            throw new TransportException("HmacSHA256 is not available", ex);
        }
        this.idMsb = idMsb;
        this.idLsb = idLsb;
    }

    /**
     * Requester: write the hello with this connection's nonce (kept in {@code nonce}).
     */
    void writeHello(final MemorySegment buffer, final long at, final byte[] nonce)
    {
        random.nextBytes(nonce);
        BuiltinWire.writeHello(buffer, at, FLAG_AUTH);
        buffer.set(LONG, at + 8, idMsb);
        buffer.set(LONG, at + 16, idLsb);
        MemorySegment.copy(nonce, 0, buffer, ValueLayout.JAVA_BYTE, at + 24, NONCE_BYTES);
    }

    /**
     * Source: answer a hello with the challenge and keep the proof the requester must send back.
     *
     * @param hello         the hello's bytes.
     * @param at            where it starts.
     * @param challenge     where the challenge goes ({@link #CHALLENGE_BYTES}).
     * @param expectedProof filled with the proof to expect.
     */
    void challenge(final MemorySegment hello, final long at, final MemorySegment challenge, final byte[] expectedProof)
    {
        final byte[] requesterNonce = hello.asSlice(at + 24, NONCE_BYTES).toArray(ValueLayout.JAVA_BYTE);
        final long requesterMsb = hello.get(LONG, at + 8);
        final long requesterLsb = hello.get(LONG, at + 16);
        final byte[] sourceNonce = new byte[NONCE_BYTES];
        random.nextBytes(sourceNonce);
        final byte[] sourceMac = mac(SOURCE_LABEL, requesterNonce, sourceNonce, requesterMsb, requesterLsb, idMsb, idLsb);
        System.arraycopy(
            mac(REQUESTER_LABEL, requesterNonce, sourceNonce, requesterMsb, requesterLsb, idMsb, idLsb), 0,
            expectedProof, 0, MAC_BYTES);
        MemorySegment.copy(sourceNonce, 0, challenge, ValueLayout.JAVA_BYTE, 0, NONCE_BYTES);
        challenge.set(LONG, NONCE_BYTES, idMsb);
        challenge.set(LONG, NONCE_BYTES + 8, idLsb);
        MemorySegment.copy(sourceMac, 0, challenge, ValueLayout.JAVA_BYTE, NONCE_BYTES + 16, MAC_BYTES);
    }

    /**
     * Requester: check the source's challenge and write the proof.
     *
     * @return false when the source's MAC does not verify (it does not hold the key).
     */
    boolean answer(final MemorySegment challenge, final byte[] nonce, final MemorySegment proof, final long proofAt)
    {
        final byte[] sourceNonce = challenge.asSlice(0, NONCE_BYTES).toArray(ValueLayout.JAVA_BYTE);
        final long sourceMsb = challenge.get(LONG, NONCE_BYTES);
        final long sourceLsb = challenge.get(LONG, NONCE_BYTES + 8);
        final byte[] sourceMac = challenge.asSlice(NONCE_BYTES + 16, MAC_BYTES).toArray(ValueLayout.JAVA_BYTE);
        final byte[] expected = mac(SOURCE_LABEL, nonce, sourceNonce, idMsb, idLsb, sourceMsb, sourceLsb);
        if (!MessageDigest.isEqual(expected, sourceMac))
        {
            return false;
        }
        final byte[] answer = mac(REQUESTER_LABEL, nonce, sourceNonce, idMsb, idLsb, sourceMsb, sourceLsb);
        MemorySegment.copy(answer, 0, proof, ValueLayout.JAVA_BYTE, proofAt, PROOF_BYTES);
        return true;
    }

    /**
     * Source: check the requester's proof.
     */
    static boolean proves(final MemorySegment in, final long at, final byte[] expectedProof)
    {
        return MessageDigest.isEqual(expectedProof, in.asSlice(at, PROOF_BYTES).toArray(ValueLayout.JAVA_BYTE));
    }

    private byte[] mac(
        final byte[] label,
        final byte[] requesterNonce,
        final byte[] sourceNonce,
        final long requesterMsb,
        final long requesterLsb,
        final long sourceMsb,
        final long sourceLsb)
    {
        mac.update(label);
        mac.update(requesterNonce);
        mac.update(sourceNonce);
        final byte[] ids = new byte[32];
        final MemorySegment idSegment = MemorySegment.ofArray(ids);
        idSegment.set(LONG, 0, requesterMsb);
        idSegment.set(LONG, 8, requesterLsb);
        idSegment.set(LONG, 16, sourceMsb);
        idSegment.set(LONG, 24, sourceLsb);
        mac.update(ids);
        return mac.doFinal();
    }
}
