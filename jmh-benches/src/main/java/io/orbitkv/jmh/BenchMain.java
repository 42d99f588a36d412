package io.orbitkv.jmh;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * Entry point of benchmarks.jar: JMH's own main, with the project's JVM flags (defined once in the parent pom)
 * appended to every forked JVM so that Agrona and FFM work in the forks exactly as in tests and the launcher.
 */
public final class BenchMain
{
    private BenchMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final List<String> jmhArgs = new ArrayList<>(Arrays.asList(args));
        if (!jmhArgs.contains("-jvmArgsAppend"))
        {
            jmhArgs.add("-jvmArgsAppend");
            jmhArgs.add(jvmFlags());
        }
        org.openjdk.jmh.Main.main(jmhArgs.toArray(new String[0]));
    }

    /**
     * The JVM flags every OrbitKV JVM needs, as filtered into this jar at build time.
     *
     * @return the flags separated by spaces.
     * @throws IOException if the resource is missing from the jar.
     */
    public static String jvmFlags() throws IOException
    {
        try (InputStream in = BenchMain.class.getResourceAsStream("/orbitkv-jvm.properties"))
        {
            if (null == in)
            {
                throw new IOException("orbitkv-jvm.properties missing from benchmarks.jar");
            }
            final Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("orbitkv.jvm.flags");
        }
    }
}
