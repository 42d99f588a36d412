package io.orbitkv.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A request trace in the Mooncake JSON-lines format: one object a line with {@code timestamp} (ms), {@code input_length}
 * and {@code output_length} (tokens) and {@code hash_ids}, one id per {@value #TOKENS_PER_BLOCK} tokens of the prompt;
 * an id stands for its whole prefix, so the ids of a request form a chain. Blank lines are skipped; a line that is not
 * such an object fails the read with its line number.
 */
final class ReplayTrace
{
    /** Tokens one hash id covers. */
    static final int TOKENS_PER_BLOCK = 512;

    /** The longest chain a request may carry (the engine's data region holds one chain at a time). */
    static final int MAX_CHAIN = 4096;

    /**
     * One request of the trace.
     *
     * @param index        its position in the trace, from 0.
     * @param timestampMs  arrival time.
     * @param inputLength  prompt tokens.
     * @param outputLength generated tokens.
     * @param hashIds      the chain of block ids.
     */
    record Request(int index, long timestampMs, int inputLength, int outputLength, long[] hashIds)
    {
    }

    private ReplayTrace()
    {
    }

    /**
     * Read a whole trace file.
     *
     * @param file  the JSON-lines file.
     * @param limit at most this many requests (0: all).
     * @return the requests in file order.
     * @throws IOException when the file cannot be read or a line is not a request.
     */
    static List<Request> read(final Path file, final int limit) throws IOException
    {
        final ObjectMapper mapper = new ObjectMapper();
        final List<Request> requests = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            String line;
            int lineNumber = 0;
            while (null != (line = reader.readLine()) && (0 == limit || requests.size() < limit))
            {
                lineNumber++;
                if (line.isBlank())
                {
                    continue;
                }
                requests.add(parse(mapper, line, lineNumber, requests.size(), file));
            }
        }
        if (requests.isEmpty())
        {
            throw new IOException(file + ": no requests");
        }
        return requests;
    }

    private static Request parse(
        final ObjectMapper mapper, final String line, final int lineNumber, final int index, final Path file)
        throws IOException
    {
        final JsonNode node;
        try
        {
            node = mapper.readTree(line);
        }
        catch (final com.fasterxml.jackson.core.JsonProcessingException ex)
        {
            throw new IOException(file + ":" + lineNumber + ": not JSON (" + ex.getOriginalMessage() + ")");
        }
        final JsonNode ids = node.path("hash_ids");
        if (!node.isObject() || !ids.isArray() || !node.path("timestamp").isNumber() ||
            !node.path("input_length").isNumber())
        {
            throw new IOException(file + ":" + lineNumber + ": needs timestamp, input_length and a hash_ids array");
        }
        if (ids.size() > MAX_CHAIN)
        {
            throw new IOException(file + ":" + lineNumber + ": " + ids.size() + " hash ids, more than " + MAX_CHAIN);
        }
        final long[] chain = new long[ids.size()];
        for (int i = 0; i < chain.length; i++)
        {
            if (!ids.get(i).canConvertToLong() || ids.get(i).asLong() < 0)
            {
                throw new IOException(file + ":" + lineNumber + ": hash id " + i + " is not a non-negative integer");
            }
            chain[i] = ids.get(i).asLong();
        }
        return new Request(index, node.path("timestamp").asLong(), node.path("input_length").asInt(),
            node.path("output_length").asInt(), chain);
    }

    /**
     * Write a synthetic trace in the same format: conversations that share a system prompt, each turn extending its
     * conversation's chain, so prefixes repeat within and across hosts.
     *
     * @param file     where to write.
     * @param requests how many requests.
     * @param seed     random seed.
     * @throws IOException when the file cannot be written.
     */
    static void writeSynthetic(final Path file, final int requests, final long seed) throws IOException
    {
        final Random random = new Random(seed);
        final int conversations = Math.max(1, requests / 6);
        final List<List<Long>> chains = new ArrayList<>();
        long nextId = 4;
        for (int c = 0; c < conversations; c++)
        {
            final List<Long> chain = new ArrayList<>(List.of(0L, 1L));
            chains.add(chain);
        }
        final StringBuilder text = new StringBuilder();
        for (int r = 0; r < requests; r++)
        {
            final List<Long> chain = chains.get(random.nextInt(conversations));
            final int grow = 1 + random.nextInt(4);
            for (int g = 0; g < grow && chain.size() < 40; g++)
            {
                chain.add(nextId++);
            }
            text.append("{\"timestamp\": ").append(r * 10L).append(", \"input_length\": ")
                .append(chain.size() * TOKENS_PER_BLOCK - random.nextInt(TOKENS_PER_BLOCK)).append(", \"output_length\": ")
                .append(1 + random.nextInt(300)).append(", \"hash_ids\": ").append(chain).append("}\n");
        }
        Files.writeString(file, text);
    }
}
