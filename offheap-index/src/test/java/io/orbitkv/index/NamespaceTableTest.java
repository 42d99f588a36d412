package io.orbitkv.index;

import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static io.orbitkv.index.NamespaceTable.LIMIT_REACHED;
import static io.orbitkv.index.NamespaceTable.NOT_FOUND;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class NamespaceTableTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);

    @Test
    void shouldRegisterThenLookUpTheSameId()
    {
        final NamespaceTable table = new NamespaceTable();
        final int length = put(5, "llama-3-70b/tp8");

        assertEquals(NOT_FOUND, table.lookup(buffer, 5, length));
        final int id = table.register(buffer, 5, length);
        assertEquals(0, id);
        assertEquals(id, table.lookup(buffer, 5, length));
        assertEquals(id, table.register(buffer, 5, length), "registering twice returns the same id");
        assertEquals(1, table.size());
        assertArrayEquals("llama-3-70b/tp8".getBytes(StandardCharsets.US_ASCII), table.namespaceBytes(id));
    }

    @Test
    void shouldCompareNamesExactly()
    {
        final NamespaceTable table = new NamespaceTable();
        final int abc = table.register(buffer, 0, put(0, "model-a"));
        final int abcd = table.lookupOrRegister(buffer, 0, put(0, "model-ab"));
        final int abd = table.lookupOrRegister(buffer, 0, put(0, "model-b"));

        assertNotEquals(abc, abcd);
        assertNotEquals(abc, abd);
        assertNotEquals(abcd, abd);
        assertEquals(abc, table.lookup(buffer, 0, put(0, "model-a")));
        assertEquals(NOT_FOUND, table.lookup(buffer, 0, put(0, "model-")));
    }

    @Test
    void shouldNotLetTheRememberedLastNameAnswerForAnother()
    {
        final NamespaceTable table = new NamespaceTable();
        final int a = table.register(buffer, 0, put(0, "model-a"));
        final int b = table.register(buffer, 0, put(0, "model-b"));
        for (int i = 0; i < 3; i++)
        {
            assertEquals(a, table.lookup(buffer, 0, put(0, "model-a")));
            assertEquals(a, table.lookup(buffer, 0, put(0, "model-a")));
            assertEquals(NOT_FOUND, table.lookup(buffer, 0, put(0, "model-a2")));
            assertEquals(NOT_FOUND, table.lookup(buffer, 0, put(0, "model")));
            assertEquals(b, table.lookup(buffer, 0, put(0, "model-b")));
        }
    }

    @Test
    void shouldAnswerLimitReachedOnceMaxNamespacesAreRegistered()
    {
        final NamespaceTable table = new NamespaceTable(3);
        for (int i = 0; i < 3; i++)
        {
            assertEquals(i, table.register(buffer, 0, put(0, "ns-" + i)));
        }

        assertEquals(LIMIT_REACHED, table.register(buffer, 0, put(0, "ns-3")));
        assertEquals(LIMIT_REACHED, table.lookupOrRegister(buffer, 0, put(0, "ns-4")));
        assertEquals(1, table.lookupOrRegister(buffer, 0, put(0, "ns-1")), "existing names still resolve");
    }

    @Test
    void shouldHandleManyNamespacesUpToTheDefaultLimit()
    {
        final NamespaceTable table = new NamespaceTable();
        for (int i = 0; i < NamespaceTable.DEFAULT_MAX_NAMESPACES; i++)
        {
            assertEquals(i, table.register(buffer, 0, put(0, "tenant/" + i)));
        }
        for (int i = 0; i < NamespaceTable.DEFAULT_MAX_NAMESPACES; i++)
        {
            assertEquals(i, table.lookup(buffer, 0, put(0, "tenant/" + i)));
        }
        assertEquals(LIMIT_REACHED, table.register(buffer, 0, put(0, "one-more")));
    }

    @Test
    void shouldRejectNamesOutsideOneTo256Bytes()
    {
        final NamespaceTable table = new NamespaceTable();

        assertThrows(IllegalArgumentException.class, () -> table.lookup(buffer, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> table.register(buffer, 0, 257));
        assertEquals(0, table.register(buffer, 0, 256));
    }

    @Test
    void shouldHandOutACopyOfTheName()
    {
        final NamespaceTable table = new NamespaceTable();
        final int id = table.register(buffer, 0, put(0, "abc"));
        table.namespaceBytes(id)[0] = 'z';

        assertEquals(id, table.lookup(buffer, 0, put(0, "abc")));
        assertThrows(IllegalArgumentException.class, () -> table.namespaceBytes(1));
    }

    private int put(final int offset, final String name)
    {
        return buffer.putStringWithoutLengthAscii(offset, name);
    }
}
