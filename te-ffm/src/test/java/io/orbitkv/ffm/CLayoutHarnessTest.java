package io.orbitkv.ffm;

import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Compiles src/test/c/libc_layout.c with the system's gcc and compares what the headers say with the values
 * copied by hand into {@link LibC}, {@link Errno}, {@link IoUringConstants} and the struct classes: a binding
 * constant, struct size or field offset that differs from the headers by one fails the build.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CLayoutHarnessTest
{
    private static final Path SOURCE = Path.of("src", "test", "c", "libc_layout.c");
    private static final Path BINARY = Path.of("target", "c", "libc_layout");
    private static final List<Class<?>> CONSTANT_CLASSES = List.of(LibC.class, Errno.class, IoUringConstants.class);
    private static final List<Class<?>> STRUCT_CLASSES = List.of(
        IoSqringOffsets.class, IoCqringOffsets.class, IoUringParams.class, IoUringSqe.class, IoUringCqe.class, Iovec.class,
        IoUringGeteventsArg.class, KernelTimespec.class, EpollEvent.class, MsgHdr.class);
    private static final String OFFSET_METHOD_SUFFIX = "$offset";

    private static Map<String, Long> constants;
    private static Map<String, Long> sizes;
    private static Map<String, Long> offsets;

    @BeforeAll
    static void compileAndRun() throws IOException, InterruptedException
    {
        final String gcc = findOnPath("gcc");
        assumeTrue(null != gcc, "gcc not found on PATH: C header values not checked against the Java bindings");

        Files.createDirectories(BINARY.getParent());
        run(List.of(gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", BINARY.toString(), SOURCE.toString()));
        final String output = run(List.of(BINARY.toString()));

        constants = new TreeMap<>();
        sizes = new TreeMap<>();
        offsets = new TreeMap<>();
        for (final String line : output.split("\n"))
        {
            final String[] parts = line.trim().split(" ");
            assertEquals(3, parts.length, () -> "malformed harness line: " + line);
            final Map<String, Long> target = switch (parts[0])
            {
                case "const" -> constants;
                case "sizeof" -> sizes;
                case "offsetof" -> offsets;
                default -> throw new IllegalStateException("unknown harness kind: " + line);
            };
            assertTrue(null == target.put(parts[1], Long.parseLong(parts[2])), () -> "duplicate: " + line);
        }
    }

    @Test
    void shouldMatchEveryBoundConstantWithSystemHeaders() throws ReflectiveOperationException
    {
        final List<String> mismatches = new ArrayList<>();
        for (final Map.Entry<String, Long> entry : constants.entrySet())
        {
            final Field field = constantField(entry.getKey());
            final long javaValue = ((Number)field.get(null)).longValue();
            if (javaValue != entry.getValue())
            {
                mismatches.add(field.getDeclaringClass().getSimpleName() + '.' + entry.getKey() + " = " + javaValue +
                    ", headers say " + entry.getValue());
            }
        }
        assertEquals(List.of(), mismatches);
    }

    @Test
    void shouldCheckEveryDeclaredConstantAndLayout()
    {
        // A constant added to Java without a line in libc_layout.c would go unchecked.
        final List<String> unchecked = new ArrayList<>();
        for (final Class<?> type : CONSTANT_CLASSES)
        {
            for (final Field field : type.getFields())
            {
                if (!Modifier.isStatic(field.getModifiers()))
                {
                    continue;
                }
                final Class<?> fieldType = field.getType();
                final boolean isConstant = fieldType == int.class || fieldType == long.class;
                final boolean isLayout = MemoryLayout.class.isAssignableFrom(fieldType);
                if ((isConstant && !constants.containsKey(field.getName())) ||
                    (isLayout && !sizes.containsKey(field.getName())))
                {
                    unchecked.add(type.getSimpleName() + '.' + field.getName());
                }
            }
        }
        assertEquals(List.of(), unchecked, "add these to " + SOURCE);
    }

    @Test
    void shouldCheckEveryStructSizeAndFieldOffset()
    {
        // A field or struct added to Java without a line in libc_layout.c would go unchecked.
        final List<String> unchecked = new ArrayList<>();
        for (final Class<?> type : STRUCT_CLASSES)
        {
            final String name = type.getSimpleName();
            if (!sizes.containsKey(name))
            {
                unchecked.add("sizeof " + name);
            }
            for (final Method method : type.getDeclaredMethods())
            {
                final String methodName = method.getName();
                if (Modifier.isStatic(method.getModifiers()) && methodName.endsWith(OFFSET_METHOD_SUFFIX))
                {
                    final String field = methodName.substring(0, methodName.length() - OFFSET_METHOD_SUFFIX.length());
                    if (!offsets.containsKey(name + '.' + field))
                    {
                        unchecked.add("offsetof " + name + '.' + field);
                    }
                }
            }
        }
        assertEquals(List.of(), unchecked, "add these to " + SOURCE);
    }

    @Test
    void shouldMatchStructLayoutsWithTheirOffsetConstants() throws ReflectiveOperationException
    {
        // The $OFFSET constants are what hot paths use; each must agree with its accessor, which the harness checks.
        for (final Class<?> type : STRUCT_CLASSES)
        {
            for (final Method method : type.getDeclaredMethods())
            {
                final String methodName = method.getName();
                if (Modifier.isStatic(method.getModifiers()) && methodName.endsWith(OFFSET_METHOD_SUFFIX))
                {
                    final String field = methodName.substring(0, methodName.length() - OFFSET_METHOD_SUFFIX.length());
                    final long constant = type.getField(field.toUpperCase(Locale.ROOT) + "$OFFSET").getLong(null);
                    assertEquals(constant, (long)method.invoke(null), () -> type.getSimpleName() + '.' + field);
                }
            }
        }
    }

    @Test
    void shouldMatchLayoutAndStructSizesWithCompiler() throws ReflectiveOperationException
    {
        for (final Map.Entry<String, Long> entry : sizes.entrySet())
        {
            final String name = entry.getKey();
            final long javaSize = name.startsWith("C_") ?
                ((MemoryLayout)LibC.class.getField(name).get(null)).byteSize() :
                (long)staticMethod(name, "sizeof").invoke(null);
            assertEquals(entry.getValue(), javaSize, () -> "sizeof " + name);
        }
    }

    @Test
    void shouldMatchStructFieldOffsetsWithCompiler() throws ReflectiveOperationException
    {
        assertTrue(offsets.containsKey("TimespecFixture.tv_nsec"), "harness lost its struct fixture: " + offsets);
        assertTrue(offsets.containsKey("IoUringSqe.buf_index"), "harness lost the io_uring structs: " + offsets);
        for (final Map.Entry<String, Long> entry : offsets.entrySet())
        {
            final String[] classAndField = entry.getKey().split("\\.");
            final long javaOffset = (long)staticMethod(classAndField[0], classAndField[1] + "$offset").invoke(null);
            assertEquals(entry.getValue(), javaOffset, () -> "offsetof " + entry.getKey());
        }
    }

    private static Field constantField(final String name)
    {
        for (final Class<?> type : CONSTANT_CLASSES)
        {
            try
            {
                return type.getField(name);
            }
            catch (final NoSuchFieldException ignore)
            {
                // try the next class
            }
        }
        return fail("harness prints " + name + " but no Java binding declares it");
    }

    private static Method staticMethod(final String simpleClassName, final String methodName)
        throws ReflectiveOperationException
    {
        final Class<?> type = Class.forName(LibC.class.getPackageName() + '.' + simpleClassName);
        final Method method = type.getDeclaredMethod(methodName);
        method.setAccessible(true);
        return method;
    }

    private static String findOnPath(final String executable)
    {
        final String path = System.getenv("PATH");
        if (null == path)
        {
            return null;
        }
        for (final String directory : path.split(java.io.File.pathSeparator))
        {
            final Path candidate = Path.of(directory, executable);
            if (Files.isExecutable(candidate))
            {
                return candidate.toString();
            }
        }
        return null;
    }

    private static String run(final List<String> command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            fail("timed out: " + String.join(" ", command));
        }
        assertEquals(0, process.exitValue(), () -> String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
