package io.orbitkv.manager.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every hand-written class in a module's main sources is reached from a product entry point (a {@code main}):
 * a class that only tests or benchmarks use belongs in their sources, not in the product. The main classes of
 * every library module and of the Manager are imported (benchmarks are not on this module's class path, and tests
 * are left out), the classes each one depends on are followed from every {@code main} and every public class of an
 * {@code ext} package (loaded by a name a property gives), and what is left over is a
 * finding. Generated code (the SBE codecs) is not judged: only classes whose source file lies under a module's
 * {@code src/main/java}.
 *
 * <p>Class files cannot show every use: javac copies a compile-time constant into the class that reads it. A class
 * that holds only such constants (the {@code *Limits} tables) is therefore reached when the source file of a reached
 * class names it.
 */
final class MainCodeReachabilityTest
{
    /**
     * Unreached classes in packages another change is reworking (the Manager's root, ring, catalog, transfer, peer
     * and status packages): listed here so the scan can be strict everywhere else, each to be removed or used by
     * that rework. Nothing outside those packages may be added.
     */
    private static final Set<String> PENDING_IN_REWORKED_PACKAGES = Set.of();

    /**
     * Public API of the engine-client library that engines outside this repository call and no product code does.
     */
    private static final Set<String> LIBRARY_API = Set.of(
        // The Java twin of the C client's okv_hash_from_u64 and Python's hash_from_int (the cross-language test
        // checks all three write the same bytes).
        "io.orbitkv.client.BlockHashes");

    private static JavaClasses product;
    private static SourceFiles handWritten;

    @BeforeAll
    static void importProduct()
    {
        product = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.orbitkv");
        handWritten = new SourceFiles(mainSourceRoots());
    }

    @Test
    void shouldReachEveryHandWrittenMainClassFromAnEntryPoint()
    {
        final Set<String> unreached = unreachedTopLevelClasses(product, handWritten);
        unreached.removeAll(PENDING_IN_REWORKED_PACKAGES);
        unreached.removeAll(LIBRARY_API);
        assertEquals(new TreeSet<String>(), unreached, "main classes that only tests or benchmarks use");
    }

    @Test
    void shouldKeepTheListOfPendingClassesCurrent()
    {
        final Set<String> unreached = unreachedTopLevelClasses(product, handWritten);
        final Set<String> listed = new HashSet<>(PENDING_IN_REWORKED_PACKAGES);
        listed.addAll(LIBRARY_API);
        for (final String pending : listed)
        {
            assertTrue(unreached.contains(pending), () -> pending + " is reached (or gone) now: drop it from the list");
        }
    }

    @Test
    void shouldImportTheManagerAndEveryLibraryModule()
    {
        for (final String type : new String[]{ "io.orbitkv.manager.cli.OrbitKvCli", "io.orbitkv.codecs.StateKey",
            "io.orbitkv.ffm.LibC", "io.orbitkv.transport.BuiltinTransport", "io.orbitkv.client.EngineClient" })
        {
            assertTrue(product.contain(type), () -> "not imported: " + type);
            assertTrue(handWritten.test(product.get(type)), () -> "source not found under src/main/java: " + type);
        }
        assertFalse(handWritten.test(product.get("io.orbitkv.codecs.engine.MessageHeaderDecoder")),
            "generated codecs are not judged");
    }

    @Test
    void shouldFlagAClassThatOnlyAnUnreachedClassUses()
    {
        final JavaClasses fixture = new ClassFileImporter().importPackages(getClass().getPackageName() + ".reach");
        final String pkg = getClass().getPackageName() + ".reach.";
        assertEquals(Set.of(pkg + "Orphan", pkg + "Unused", pkg + "UnreadLimits"),
            unreachedTopLevelClasses(fixture, new SourceFiles(List.of(fixtureSources()))));
    }

    private static Path fixtureSources()
    {
        final Path repository = Path.of(System.getProperty("orbitkv.repo.root", "..")).toAbsolutePath().normalize();
        return repository.resolve(Path.of("manager", "src", "test", "java"));
    }

    /**
     * @return the names of top-level classes none of whose nest members is reached from a {@code main}.
     */
    static Set<String> unreachedTopLevelClasses(final JavaClasses classes, final SourceFiles judged)
    {
        final Map<String, Set<String>> uses = new HashMap<>();
        final Deque<String> pending = new ArrayDeque<>();
        final Set<String> reached = new HashSet<>();
        for (final JavaClass type : classes)
        {
            final String nest = topLevelName(type.getName());
            final Set<String> targets = uses.computeIfAbsent(nest, (ignore) -> new HashSet<>());
            for (final Dependency dependency : type.getDirectDependenciesFromSelf())
            {
                targets.add(topLevelName(dependency.getTargetClass().getName()));
            }
            if ((hasMain(type) || loadedByName(type)) && reached.add(nest))
            {
                pending.add(nest);
            }
        }
        final Map<String, JavaClass> constantHolders = new HashMap<>();
        for (final JavaClass type : classes)
        {
            if (type.isTopLevelClass() && holdsOnlyConstants(type) && judged.test(type))
            {
                constantHolders.put(type.getName(), type);
            }
        }

        boolean grew = true;
        while (grew)
        {
            while (!pending.isEmpty())
            {
                for (final String target : uses.getOrDefault(pending.poll(), Set.of()))
                {
                    if (uses.containsKey(target) && reached.add(target))
                    {
                        pending.add(target);
                    }
                }
            }
            grew = false;
            for (final JavaClass holder : constantHolders.values())
            {
                if (!reached.contains(holder.getName()) && namedByAReachedSource(holder, reached, classes, judged))
                {
                    reached.add(holder.getName());
                    pending.add(holder.getName());
                    grew = true;
                }
            }
        }

        final Set<String> unreached = new TreeSet<>();
        for (final JavaClass type : classes)
        {
            final String nest = topLevelName(type.getName());
            if (!reached.contains(nest) && type.getName().equals(nest) && !type.getSimpleName().equals("package-info") &&
                judged.test(type))
            {
                unreached.add(nest);
            }
        }
        return unreached;
    }

    /**
     * @return true for a class of an {@code ext} package: a fault injector or other supplier that a property names
     * and the context loads by that name, so no class file refers to it (as in Aeron's driver {@code ext}).
     */
    private static boolean loadedByName(final JavaClass type)
    {
        return type.getPackageName().endsWith(".ext") && type.getModifiers().contains(JavaModifier.PUBLIC);
    }

    /**
     * @return true for a class whose fields are all static final primitives or strings and whose code is private:
     * javac inlines every use of it.
     */
    private static boolean holdsOnlyConstants(final JavaClass type)
    {
        if (type.getFields().isEmpty())
        {
            return false;
        }
        for (final JavaField field : type.getFields())
        {
            final Set<JavaModifier> modifiers = field.getModifiers();
            final JavaClass fieldType = field.getRawType();
            if (!modifiers.contains(JavaModifier.STATIC) || !modifiers.contains(JavaModifier.FINAL) ||
                !(fieldType.isPrimitive() || fieldType.isEquivalentTo(String.class)))
            {
                return false;
            }
        }
        for (final JavaCodeUnit code : type.getCodeUnits())
        {
            if (!code.getModifiers().contains(JavaModifier.PRIVATE) && !"<clinit>".equals(code.getName()))
            {
                return false;
            }
        }
        return true;
    }

    private static boolean namedByAReachedSource(
        final JavaClass holder, final Set<String> reached, final JavaClasses classes, final SourceFiles judged)
    {
        final Pattern name = Pattern.compile("\\b" + holder.getSimpleName() + "\\b");
        for (final String user : reached)
        {
            if (classes.contain(user))
            {
                final String text = judged.text(classes.get(user));
                if (null != text && name.matcher(text).find())
                {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean hasMain(final JavaClass type)
    {
        for (final JavaMethod method : type.getMethods())
        {
            if ("main".equals(method.getName()) && method.getModifiers().contains(JavaModifier.STATIC) &&
                method.getModifiers().contains(JavaModifier.PUBLIC) && 1 == method.getRawParameterTypes().size() &&
                method.getRawParameterTypes().get(0).isEquivalentTo(String[].class))
            {
                return true;
            }
        }
        return false;
    }

    private static String topLevelName(final String name)
    {
        final int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }

    private static List<Path> mainSourceRoots()
    {
        final Path repository = Path.of(System.getProperty("orbitkv.repo.root", "..")).toAbsolutePath().normalize();
        final Path mainJava = Path.of("src", "main", "java");
        final List<Path> roots = new ArrayList<>();
        try (Stream<Path> paths = Files.walk(repository, 5))
        {
            paths.filter((path) -> path.endsWith(mainJava) && Files.isDirectory(path))
                .filter((path) -> !repository.relativize(path).toString().contains("target"))
                .forEach(roots::add);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        assertTrue(roots.size() >= 7, () -> "module sources not found under " + repository + ": " + roots);
        return roots;
    }

    /**
     * Where the hand-written classes' sources are: a class is judged when its source file lies under one of the
     * roots, by package and the class file's SourceFile attribute.
     */
    static final class SourceFiles implements Predicate<JavaClass>
    {
        private final List<Path> roots;
        private final Map<String, Path> found = new HashMap<>();

        SourceFiles(final List<Path> roots)
        {
            this.roots = roots;
        }

        public boolean test(final JavaClass type)
        {
            return null != find(type);
        }

        Path find(final JavaClass type)
        {
            if (found.containsKey(type.getName()))
            {
                return found.get(type.getName());
            }
            Path source = null;
            final String file = type.getSource().flatMap((where) -> where.getFileName()).orElse(null);
            if (null != file)
            {
                final String directory = type.getPackageName().replace('.', '/');
                for (final Path root : roots)
                {
                    final Path candidate = root.resolve(directory).resolve(file);
                    if (Files.isRegularFile(candidate))
                    {
                        source = candidate;
                        break;
                    }
                }
            }
            found.put(type.getName(), source);
            return source;
        }

        /**
         * @return the text of the class's source file, or null for generated code.
         */
        String text(final JavaClass type)
        {
            final Path source = find(type);
            if (null == source)
            {
                return null;
            }
            try
            {
                return Files.readString(source);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }
    }
}
