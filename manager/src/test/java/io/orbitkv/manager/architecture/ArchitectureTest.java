package io.orbitkv.manager.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The package rules of the server, checked on its compiled classes (tests excluded):
 * <ul>
 *     <li>no dependency cycle among the Manager's parts (the sub-packages of {@code io.orbitkv.manager});</li>
 *     <li>a part uses the root package only for the concluded configuration ({@code Configuration},
 *     {@code ManagerContext}): the root composes the parts, the parts do not reach back into it;</li>
 *     <li>only {@code cli}, the process entry point, is allowed to depend on {@code cli} and on the engine client
 *     library;</li>
 *     <li>library modules never depend on the server, and the server never on a benchmark.</li>
 * </ul>
 * Each rule is also run on a small fixture that breaks it, so a rule that silently matched nothing would fail.
 */
class ArchitectureTest
{
    private static final String SERVER = "io.orbitkv.manager";
    private static final String PARTS = "io.orbitkv.manager.(*)..";
    private static final String[] LIBRARIES =
        { "io.orbitkv.codecs..", "io.orbitkv.index..", "io.orbitkv.catalog..", "io.orbitkv.ffm..", "io.orbitkv.client.." };

    private static JavaClasses production;
    private static JavaClasses fixture;

    @BeforeAll
    static void importClasses()
    {
        production = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.orbitkv");
        fixture = new ClassFileImporter().importPackages(ArchitectureTest.class.getPackageName() + ".fixture");
    }

    static ArchRule partsFreeOfCycles(final String parts)
    {
        return slices().matching(parts).should().beFreeOfCycles();
    }

    @Test
    void shouldImportTheServerAndEveryLibrary()
    {
        for (final String pkg : new String[]{ SERVER + ".ring", SERVER + ".store", SERVER + ".catalog",
            "io.orbitkv.codecs", "io.orbitkv.index", "io.orbitkv.catalog", "io.orbitkv.ffm", "io.orbitkv.client" })
        {
            assertTrue(production.containPackage(pkg), () -> "nothing imported from " + pkg);
        }
    }

    @Test
    void shouldHaveNoCycleAmongTheManagersParts()
    {
        partsFreeOfCycles(PARTS).check(production);
    }

    @Test
    void shouldUseTheRootPackageOnlyForTheConfigurationFromAPart()
    {
        partsUseRootOnlyForConfiguration(SERVER).check(production);
    }

    @Test
    void shouldKeepTheEntryPointAndTheEngineClientOutOfTheServersParts()
    {
        noClasses().that().resideInAPackage(SERVER + "..").and().resideOutsideOfPackage(SERVER + ".cli..")
            .should().dependOnClassesThat().resideInAnyPackage(SERVER + ".cli..", "io.orbitkv.client..")
            .check(production);
    }

    @Test
    void shouldKeepLibrariesFreeOfTheServerAndTheServerFreeOfBenchmarks()
    {
        noClasses().that().resideInAnyPackage(LIBRARIES)
            .should().dependOnClassesThat().resideInAPackage(SERVER + "..")
            .check(production);
        noClasses().that().resideInAPackage(SERVER + "..")
            .should().dependOnClassesThat().resideInAnyPackage("io.orbitkv.bench..", "org.openjdk.jmh..")
            .check(production);
    }

    @Test
    void shouldReportACycleAndABackReferenceInTheFixture()
    {
        final String root = ArchitectureTest.class.getPackageName() + ".fixture";
        assertTrue(partsFreeOfCycles(root + ".(*)..").evaluate(fixture).hasViolation(), "cycle left..right missed");
        assertTrue(partsUseRootOnlyForConfiguration(root).evaluate(fixture).hasViolation(), "back reference missed");
    }

    private static ArchRule partsUseRootOnlyForConfiguration(final String root)
    {
        final DescribedPredicate<JavaClass> rootOtherThanConfiguration = resideInAPackage(root)
            .and(DescribedPredicate.not(configurationOf(root)))
            .as("classes of %s other than Configuration and ManagerContext", root);

        return noClasses().that(resideInAnyPackage(root + ".*..")).and().resideOutsideOfPackage(root + ".cli..")
            .should().dependOnClassesThat(rootOtherThanConfiguration);
    }

    private static DescribedPredicate<JavaClass> configurationOf(final String root)
    {
        return DescribedPredicate.describe("configuration", (final JavaClass type) ->
        {
            final String name = type.getName();
            return name.startsWith(root + ".Configuration") || name.startsWith(root + ".ManagerContext");
        });
    }
}
