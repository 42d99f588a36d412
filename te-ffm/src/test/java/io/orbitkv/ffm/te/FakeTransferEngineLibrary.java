package io.orbitkv.ffm.te;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where the build put the test stand-in for the Transfer Engine ABI (src/test/c/fake_transfer_engine.c), compiled
 * by te-ffm's pom before the tests run.
 */
public final class FakeTransferEngineLibrary
{
    /** Set by surefire to the compiled library. */
    public static final String PROPERTY = "orbitkv.te.fakeLibrary";

    private FakeTransferEngineLibrary()
    {
    }

    /**
     * @return the path of the compiled stand-in; fails the test when the build did not produce it.
     */
    public static Path path()
    {
        final String configured = System.getProperty(PROPERTY);
        final Path path = null != configured ?
            Path.of(configured) : Path.of("target", "test-classes", "libfake_transfer_engine.so");
        assertTrue(Files.isRegularFile(path), () -> "the build did not compile the TE stand-in: " + path);
        return path;
    }
}
