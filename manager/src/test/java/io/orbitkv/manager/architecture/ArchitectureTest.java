package io.orbitkv.manager.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The package rules of the server, checked on its compiled classes (tests excluded):
 * <ul>
 *     <li>no dependency cycle among the Manager's parts (the sub-packages of {@code io.orbitkv.manager}) and its
 *     composition root (the root package's classes other than {@code Configuration} and {@code ManagerContext}, the
 *     settings every part reads);</li>
 *     <li>{@code peer} moves bytes and sessions only: it imports neither {@code catalog} nor {@code transfer}, whose
 *     messages it carries, nor the catalog journal library, nor the transfer schema's codecs, nor the catalog schema's
 *     beyond the session protocol it speaks itself (header, PeerConnect, CatalogResponse, their route and status);</li>
 *     <li>{@code ring} reaches the peer side only through its front door, the {@code port} package ({@code PeerPort},
 *     {@code PeerListener} and the handles {@code LookupHandle}, {@code FetchHandle}): it depends on no class of
 *     {@code catalog} or {@code transfer};</li>
 *     <li>the door stays a door: {@code port} depends on no other part of the Manager, so what crosses it is its own
 *     interfaces and library values (the {@code codecs.CandidateTable} of an answer);</li>
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
    /**
     * The catalog schema's types of the session protocol, the only codecs the peer transport reads or writes.
     */
    private static final java.util.Set<String> SESSION_PROTOCOL = java.util.Set.of(
        "MessageHeaderDecoder", "MessageHeaderEncoder", "PeerConnectDecoder", "PeerConnectEncoder",
        "CatalogResponseDecoder", "CatalogResponseEncoder", "RouteDecoder", "RouteEncoder", "UuidDecoder", "UuidEncoder",
        "CatalogStatus");
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

    /**
     * Slices of the server: one per part (first sub-package) and one for the composition root; the settings classes
     * of the root belong to no slice.
     */
    static ArchRule serverFreeOfCycles(final String root)
    {
        return slices().assignedFrom(new SliceAssignment()
        {
            public SliceIdentifier getIdentifierOf(final JavaClass type)
            {
                final String pkg = type.getPackageName();
                if (pkg.equals(root))
                {
                    return configurationOf(root).test(type) ? SliceIdentifier.ignore() : SliceIdentifier.of("root");
                }
                if (pkg.startsWith(root + "."))
                {
                    final String rest = pkg.substring(root.length() + 1);
                    final int dot = rest.indexOf('.');
                    return SliceIdentifier.of(dot < 0 ? rest : rest.substring(0, dot));
                }
                return SliceIdentifier.ignore();
            }

            public String getDescription()
            {
                return "the parts of " + root + " and its composition root";
            }
        }).should().beFreeOfCycles();
    }

    static ArchRule ringUsesOnlyThePeerFrontDoor(final String root)
    {
        return noClasses().that().resideInAPackage(root + ".ring..")
            .should().dependOnClassesThat().resideInAnyPackage(root + ".catalog..", root + ".transfer..");
    }

    static ArchRule doorDependsOnNoPart(final String root)
    {
        return noClasses().that().resideInAPackage(root + ".port..")
            .should().dependOnClassesThat(resideInAPackage(root + "..")
                .and(DescribedPredicate.not(resideInAPackage(root + ".port..")))
                .as("classes of %s outside its port package", root));
    }

    static ArchRule peerMovesBytesOnly(final String root)
    {
        final DescribedPredicate<JavaClass> carried = resideInAnyPackage(root + ".catalog..", root + ".transfer..",
            "io.orbitkv.catalog..", "io.orbitkv.codecs.transfer..")
            .or(resideInAPackage("io.orbitkv.codecs.catalog..")
                .and(DescribedPredicate.describe("outside the session protocol", (final JavaClass type) ->
                    !SESSION_PROTOCOL.contains(outerSimpleName(type)))))
            .as("catalog, transfer, catalog journal or transfer codec classes, or catalog codecs other than %s",
                SESSION_PROTOCOL);
        return noClasses().that().resideInAPackage(root + ".peer..").should().dependOnClassesThat(carried);
    }

    private static String outerSimpleName(final JavaClass type)
    {
        final String name = type.getBaseComponentType().getName();
        final String simple = name.substring(name.lastIndexOf('.') + 1);
        final int nested = simple.indexOf('$');
        return nested < 0 ? simple : simple.substring(0, nested);
    }

    @Test
    void shouldImportTheServerAndEveryLibrary()
    {
        for (final String pkg : new String[]{ SERVER + ".ring", SERVER + ".port", SERVER + ".store", SERVER + ".catalog",
            "io.orbitkv.codecs", "io.orbitkv.index", "io.orbitkv.catalog", "io.orbitkv.ffm", "io.orbitkv.client" })
        {
            assertTrue(production.containPackage(pkg), () -> "nothing imported from " + pkg);
        }
    }

    @Test
    void shouldHaveNoCycleAmongTheManagersPartsAndItsRoot()
    {
        serverFreeOfCycles(SERVER).check(production);
    }

    @Test
    void shouldReachThePeerSideFromTheRingOnlyThroughItsFrontDoor()
    {
        ringUsesOnlyThePeerFrontDoor(SERVER).check(production);
    }

    @Test
    void shouldKeepTheDoorFreeOfThePartsOnEitherSide()
    {
        doorDependsOnNoPart(SERVER).check(production);
    }

    @Test
    void shouldKeepCatalogAndTransferTypesOutOfThePeerTransport()
    {
        peerMovesBytesOnly(SERVER).check(production);
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
        final EvaluationResult cycles = serverFreeOfCycles(root).evaluate(fixture);
        assertTrue(cycles.hasViolation(), "cycle left..right missed");
        assertTrue(cycles.getFailureReport().toString().contains("Slice root"), () ->
            "the root's cycle with left missed: " + cycles.getFailureReport());
        assertTrue(partsUseRootOnlyForConfiguration(root).evaluate(fixture).hasViolation(), "back reference missed");
        final String carried = peerMovesBytesOnly(root).evaluate(fixture).getFailureReport().toString();
        assertTrue(carried.contains("fixture.transfer.Grant"), () -> "peer decoding a transfer type missed: " + carried);
        assertTrue(carried.contains("io.orbitkv.catalog.JournalRecord"), () -> "peer reading a journal record missed");
        assertTrue(carried.contains("io.orbitkv.codecs.catalog.ColdQueryDecoder"), () -> "peer decoding a query missed");
        assertTrue(carried.contains("io.orbitkv.codecs.transfer.TransferGrantDecoder"), () ->
            "peer decoding a transfer frame missed");
        assertFalse(carried.contains("<io.orbitkv.codecs.catalog.PeerConnectDecoder>"), () ->
            "the session protocol refused: " + carried);
        final EvaluationResult pastTheDoor = ringUsesOnlyThePeerFrontDoor(root).evaluate(fixture);
        assertTrue(pastTheDoor.hasViolation(), "ring past the door missed");
        assertTrue(!pastTheDoor.getFailureReport().toString().contains("Door"), () ->
            "a ring class using only the door was reported: " + pastTheDoor.getFailureReport());
        assertTrue(doorDependsOnNoPart(root).evaluate(fixture).hasViolation(), "a door naming a transfer type missed");
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
