package io.orbitkv.manager.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Configuration.PoolPretouch;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class PoolPretouchFlagTest
{
    @Test
    void shouldDefaultToBackgroundAndAcceptTheThreeModesAndTheOlderBooleanSpellings()
    {
        assertEquals(PoolPretouch.BACKGROUND, mode());
        assertEquals(PoolPretouch.BACKGROUND, mode("--pool-pretouch=background"));
        assertEquals(PoolPretouch.BLOCKING, mode("--pool-pretouch", "blocking"));
        assertEquals(PoolPretouch.OFF, mode("--pool-pretouch=OFF"));
        assertEquals(PoolPretouch.BLOCKING, mode("--pool-pretouch=true"));
        assertEquals(PoolPretouch.OFF, mode("--pool-pretouch=false"));
        assertEquals(PoolPretouch.BLOCKING, mode("--pool-pretouch", "--pool-bytes", "4m"));
        assertEquals(PoolPretouch.OFF, mode("--no-pool-pretouch"));
        assertEquals(PoolPretouch.BACKGROUND, Configuration.POOL_PRETOUCH_DEFAULT);
    }

    @Test
    void shouldRejectAnUnknownModeNamingTheChoices()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> Configuration.parsePoolPretouch("lazy"));
        assertTrue(ex.getMessage().contains("background, blocking or off"), ex.getMessage());
    }

    @Test
    void shouldSayInTheHelpThatTrueAndFalseStillWork()
    {
        final String help = new CommandLine(new ManagerCommand()).getUsageMessage().replaceAll("\\s+", " ");
        assertTrue(help.contains("background (serve at once"), help);
        assertTrue(help.contains("true/false, and --no-pool-pretouch, are still accepted as blocking/off"), help);
    }

    private static PoolPretouch mode(final String... args)
    {
        final ManagerCommand command = new ManagerCommand();
        new CommandLine(command).parseArgs(args);
        return command.noPoolPretouch ? PoolPretouch.OFF : Configuration.parsePoolPretouch(command.poolPretouch);
    }
}
