package io.orbitkv.jmh.auth;

import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Candidates for the peer frames' MAC, over a frame in a direct buffer as the peer adapter sees it: the JDK's
 * HmacSHA256 {@link Mac} reused (the frame copied into a reused array first), HMAC-SHA256 built on two reused
 * {@link MessageDigest}s (no array from {@code doFinal}), AES-GMAC through the JDK's AES/GCM cipher (the frame as
 * additional data, a new 96-bit nonce per frame as GCM requires), and SipHash-2-4 reading the buffer in place (checked
 * against the reference vectors of the SipHash paper when it was written). Sizes span a
 * transfer control frame (128 B), a cold query (1 KiB) and a full delta batch (8 KiB). Run with {@code -prof gc}:
 * the figures that matter are ns/op and {@code gc.alloc.rate.norm}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FrameMacBenchmark
{
    @Param({"128", "1024", "8192"})
    int frameBytes;

    private final UnsafeBuffer frame = new UnsafeBuffer(BufferUtil.allocateDirectAligned(64 * 1024, 64));
    private final byte[] scratch = new byte[64 * 1024];
    private final byte[] out = new byte[32];
    private final byte[] key = new byte[32];
    private Mac mac;
    private MessageDigest inner;
    private MessageDigest outer;
    private final byte[] ipad = new byte[64];
    private final byte[] opad = new byte[64];
    private long k0;
    private long k1;
    private Cipher gcm;
    private SecretKeySpec aesKey;
    private final byte[] nonce = new byte[12];
    private long nonceCounter;

    @Setup
    public void setup() throws GeneralSecurityException
    {
        for (int i = 0; i < key.length; i++)
        {
            key[i] = (byte)(i * 7 + 3);
        }
        for (int i = 0; i < frame.capacity(); i++)
        {
            frame.putByte(i, (byte)i);
        }
        mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        inner = MessageDigest.getInstance("SHA-256");
        outer = MessageDigest.getInstance("SHA-256");
        for (int i = 0; i < 64; i++)
        {
            final byte k = i < key.length ? key[i] : 0;
            ipad[i] = (byte)(k ^ 0x36);
            opad[i] = (byte)(k ^ 0x5c);
        }
        gcm = Cipher.getInstance("AES/GCM/NoPadding");
        aesKey = new SecretKeySpec(key, 0, 16, "AES");
        final UnsafeBuffer keyBuffer = new UnsafeBuffer(key);
        k0 = keyBuffer.getLong(0, ByteOrder.LITTLE_ENDIAN);
        k1 = keyBuffer.getLong(8, ByteOrder.LITTLE_ENDIAN);
    }

    @Benchmark
    public byte jdkHmacSha256() throws GeneralSecurityException
    {
        frame.getBytes(0, scratch, 0, frameBytes);
        mac.update(scratch, 0, frameBytes);
        mac.doFinal(out, 0);
        return out[0];
    }

    @Benchmark
    public byte digestHmacSha256() throws GeneralSecurityException
    {
        frame.getBytes(0, scratch, 0, frameBytes);
        inner.update(ipad, 0, 64);
        inner.update(scratch, 0, frameBytes);
        inner.digest(out, 0, 32);
        outer.update(opad, 0, 64);
        outer.update(out, 0, 32);
        outer.digest(out, 0, 32);
        return out[0];
    }

    @Benchmark
    public byte aesGmac() throws GeneralSecurityException
    {
        frame.getBytes(0, scratch, 0, frameBytes);
        final long n = ++nonceCounter;
        for (int i = 0; i < 8; i++)
        {
            nonce[i] = (byte)(n >>> (8 * i));
        }
        gcm.init(Cipher.ENCRYPT_MODE, aesKey, new GCMParameterSpec(128, nonce));
        gcm.updateAAD(scratch, 0, frameBytes);
        gcm.doFinal(out, 0);
        return out[0];
    }

    @Benchmark
    public long sipHash24()
    {
        return sipHash24(k0, k1, frame, 0, frameBytes);
    }

    static long sipHash24(final long k0, final long k1, final UnsafeBuffer buffer, final int offset, final int length)
    {
        long v0 = 0x736f6d6570736575L ^ k0;
        long v1 = 0x646f72616e646f6dL ^ k1;
        long v2 = 0x6c7967656e657261L ^ k0;
        long v3 = 0x7465646279746573L ^ k1;
        final int end = offset + (length & ~7);
        for (int i = offset; i < end; i += 8)
        {
            final long m = buffer.getLong(i, ByteOrder.LITTLE_ENDIAN);
            v3 ^= m;
            for (int r = 0; r < 2; r++)
            {
                v0 += v1;
                v1 = Long.rotateLeft(v1, 13);
                v1 ^= v0;
                v0 = Long.rotateLeft(v0, 32);
                v2 += v3;
                v3 = Long.rotateLeft(v3, 16);
                v3 ^= v2;
                v0 += v3;
                v3 = Long.rotateLeft(v3, 21);
                v3 ^= v0;
                v2 += v1;
                v1 = Long.rotateLeft(v1, 17);
                v1 ^= v2;
                v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= m;
        }
        long last = ((long)length) << 56;
        for (int i = 0, left = length & 7; i < left; i++)
        {
            last |= (buffer.getByte(end + i) & 0xFFL) << (8 * i);
        }
        v3 ^= last;
        for (int r = 0; r < 2; r++)
        {
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13);
            v1 ^= v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16);
            v3 ^= v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21);
            v3 ^= v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17);
            v1 ^= v2;
            v2 = Long.rotateLeft(v2, 32);
        }
        v0 ^= last;
        v2 ^= 0xff;
        for (int r = 0; r < 4; r++)
        {
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13);
            v1 ^= v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16);
            v3 ^= v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21);
            v3 ^= v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17);
            v1 ^= v2;
            v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }
}
