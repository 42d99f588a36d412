package io.orbitkv.manager.ring;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Who may open what the Manager shares with engines: its directory, the CnC file, the doorbell FIFO, the client
 * data regions and the pool file. By default only the Manager's user (directories 0700, files 0600); with
 * {@code --engine-group NAME} also that group (0750 and 0660, group set to NAME), so engines of other users in it can
 * attach. Modes are set explicitly after creation, so the umask neither widens nor narrows them.
 */
public final class EngineFileAccess
{
    /** Directory mode without a group. */
    public static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    /** File mode without a group. */
    public static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    /** Directory mode with {@code --engine-group}. */
    public static final Set<PosixFilePermission> GROUP_DIR = PosixFilePermissions.fromString("rwxr-x---");
    /** File mode with {@code --engine-group}. */
    public static final Set<PosixFilePermission> GROUP_FILE = PosixFilePermissions.fromString("rw-rw----");

    private final String groupName;
    private final GroupPrincipal group;

    private EngineFileAccess(final String groupName, final GroupPrincipal group)
    {
        this.groupName = groupName;
        this.group = group;
    }

    /**
     * Access for the Manager's user only, or widened to a group.
     *
     * @param groupName the group engines run in, or null for owner-only.
     * @return the access.
     * @throws IllegalArgumentException when the group does not exist.
     */
    public static EngineFileAccess of(final String groupName)
    {
        if (null == groupName)
        {
            return new EngineFileAccess(null, null);
        }
        try
        {
            return new EngineFileAccess(groupName, Path.of("/").getFileSystem().getUserPrincipalLookupService()
                .lookupPrincipalByGroupName(groupName));
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("--engine-group '" + groupName + "' is not a group on this host: " + ex);
        }
    }

    /**
     * @return the group, or null for owner-only.
     */
    public String groupName()
    {
        return groupName;
    }

    /**
     * Set a directory's mode (and group).
     *
     * @param dir the directory.
     */
    public void directory(final File dir)
    {
        apply(dir, null == group ? OWNER_DIR : GROUP_DIR);
    }

    /**
     * Set a file's mode (and group).
     *
     * @param file the file, FIFO included.
     */
    public void file(final File file)
    {
        apply(file, null == group ? OWNER_FILE : GROUP_FILE);
    }

    private void apply(final File file, final Set<PosixFilePermission> permissions)
    {
        final PosixFileAttributeView view = Files.getFileAttributeView(file.toPath(), PosixFileAttributeView.class);
        try
        {
            if (null != group)
            {
                view.setGroup(group);
            }
            view.setPermissions(permissions);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot set " + PosixFilePermissions.toString(permissions) +
                (null == group ? "" : " and group " + groupName) + " on " + file + " (is it owned by this user?): " + ex, ex);
        }
    }

    public String toString()
    {
        return null == group ? "owner only (0700/0600)" : "owner and group " + groupName + " (0750/0660)";
    }
}
