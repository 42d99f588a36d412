package io.orbitkv.manager.cli;

import io.orbitkv.manager.membership.EtcdSecurity;
import picocli.CommandLine.Option;

/**
 * TLS and auth options of every command that talks to etcd ({@code manager}, {@code members}, {@code placement}), as
 * a picocli mixin. See {@link EtcdSecurity}.
 */
public final class EtcdAuthOptions
{
    @Option(names = "--etcd-ca", description = "PEM CA certificate that signed etcd's server certificate; with it the " +
        "etcd connection uses TLS and --etcd-endpoints takes https:// URLs.")
    String ca;

    @Option(names = "--etcd-cert", description = "PEM client certificate to present to etcd (with --etcd-key; etcd " +
        "started with --client-cert-auth requires one).")
    String cert;

    @Option(names = "--etcd-key", description = "Private key of --etcd-cert: unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY; " +
        "convert a PKCS#1 key with openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8).")
    String key;

    @Option(names = "--etcd-user", description = "etcd user to authenticate as (with --etcd-password-file).")
    String user;

    @Option(names = "--etcd-password-file", description = "File holding the etcd user's password (one line); it must " +
        "be owner-only (chmod 600).")
    String passwordFile;

    /**
     * The settings these options give, each file checked.
     *
     * @return the settings.
     * @throws IllegalArgumentException naming the flag and what is wrong.
     */
    public EtcdSecurity security()
    {
        return EtcdSecurity.of(ca, cert, key, user, passwordFile);
    }

    /**
     * These options as command-line arguments (empty for plaintext without auth), to pass on to a child process.
     *
     * @param security the settings.
     * @return the arguments.
     */
    public static java.util.List<String> args(final EtcdSecurity security)
    {
        final java.util.List<String> args = new java.util.ArrayList<>();
        if (null != security.ca())
        {
            args.add("--etcd-ca");
            args.add(security.ca().toString());
        }
        if (null != security.cert())
        {
            args.add("--etcd-cert");
            args.add(security.cert().toString());
            args.add("--etcd-key");
            args.add(security.key().toString());
        }
        if (null != security.user())
        {
            args.add("--etcd-user");
            args.add(security.user());
            args.add("--etcd-password-file");
            args.add(security.passwordFile().toString());
        }
        return args;
    }

    /**
     * Check these options and make them the defaults of every ManagerContext this JVM builds (their
     * {@code orbitkv.manager.etcd.*} properties), as tools that run Managers in-process and in child processes
     * (the benches) need: child processes get them from {@link #argsFromProperties()}.
     *
     * @return the checked settings.
     * @throws IllegalArgumentException naming the flag and what is wrong.
     */
    public EtcdSecurity exportAsProperties()
    {
        final EtcdSecurity security = security();
        set(io.orbitkv.manager.Configuration.ETCD_CA_PROP_NAME, ca);
        set(io.orbitkv.manager.Configuration.ETCD_CERT_PROP_NAME, cert);
        set(io.orbitkv.manager.Configuration.ETCD_KEY_PROP_NAME, key);
        set(io.orbitkv.manager.Configuration.ETCD_USER_PROP_NAME, user);
        set(io.orbitkv.manager.Configuration.ETCD_PASSWORD_FILE_PROP_NAME, passwordFile);
        return security;
    }

    private static void set(final String property, final String value)
    {
        if (null != value)
        {
            System.setProperty(property, value);
        }
    }

    /**
     * The etcd TLS and auth properties of this JVM as {@code orbitkv manager} arguments.
     *
     * @return the arguments, empty when none is set.
     */
    public static java.util.List<String> argsFromProperties()
    {
        return args(securityFromProperties());
    }

    /**
     * The etcd TLS and auth properties of this JVM as settings.
     *
     * @return the settings.
     */
    public static EtcdSecurity securityFromProperties()
    {
        return EtcdSecurity.of(io.orbitkv.manager.Configuration.etcdCa(), io.orbitkv.manager.Configuration.etcdCert(),
            io.orbitkv.manager.Configuration.etcdKey(), io.orbitkv.manager.Configuration.etcdUser(),
            io.orbitkv.manager.Configuration.etcdPasswordFile());
    }
}
