package io.orbitkv.ffm.te;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compiles src/test/c/te_layout.c and compares the C compiler's struct sizes and field offsets with
 * {@link TransferRequest} and {@link TransferStatusStruct}; every {@code $offset} accessor must have a line there.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransferEngineLayoutTest
{
    private static final Path SOURCE = Path.of("src", "test", "c", "te_layout.c");
    private static final Path BINARY = Path.of("target", "c", "te_layout");
    private static final String OFFSET_SUFFIX = "$offset";

    @Test
    void shouldMatchStructSizesAndOffsetsWithCompiler() throws Exception
    {
        Files.createDirectories(BINARY.getParent());
        run(List.of("gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", BINARY.toString(), SOURCE.toString()));
        final Map<String, Long> compiled = new TreeMap<>();
        for (final String line : run(List.of(BINARY.toString())).split("\n"))
        {
            final String[] parts = line.trim().split(" ");
            compiled.put(parts[0] + ' ' + parts[1], Long.parseLong(parts[2]));
        }

        assertEquals(40L, compiled.get("sizeof TransferRequest"));
        assertEquals(16L, compiled.get("sizeof TransferStatusStruct"));
        int checked = 0;
        for (final Class<?> type : List.of(TransferRequest.class, TransferStatusStruct.class))
        {
            final String name = type.getSimpleName();
            assertEquals(compiled.get("sizeof " + name), (long)type.getMethod("sizeof").invoke(null), name);
            for (final Method method : type.getDeclaredMethods())
            {
                if (Modifier.isStatic(method.getModifiers()) && method.getName().endsWith(OFFSET_SUFFIX))
                {
                    final String field = method.getName().substring(0, method.getName().length() - OFFSET_SUFFIX.length());
                    final Long offset = compiled.get("offsetof " + name + '.' + field);
                    assertTrue(null != offset, () -> "add " + name + '.' + field + " to " + SOURCE);
                    assertEquals(offset, (long)method.invoke(null), name + '.' + field);
                    checked++;
                }
            }
        }
        assertEquals(8, checked);
    }

    private static String run(final List<String> command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), () -> "timed out: " + command);
        assertEquals(0, process.exitValue(), () -> command + " failed:\n" + output);
        return output;
    }
}
