extension ServerCommandLine {
    /// A server's `--help` text: its own `summary`, the options every server shares (with its
    /// default port and what its data directory holds), its `environment` lines, what it warns
    /// about, what SIGINT/SIGTERM (`stop`) and SIGHUP (`reload`) do, and the exit statuses. The
    /// server's texts come wrapped at 100 columns.
    public static func usage(
        name: String, summary: String, defaultPort: Int, dataDirectory: String, environment: String,
        warnings: String, stop: String, reload: String
    ) -> String {
        """
        \(name) — \(summary)

        USAGE: \(name) [--config FILE] [--port N] [--host ADDR] [--data-dir DIR] [--log-level LEVEL]

        OPTIONS:
          --config FILE      JSON configuration (default Config/\(name).json); an unknown key, a
                             value of the wrong type or a JSON syntax error stops the server
          --port N           listen port 0…65535, 0 = any free port (default: config, else \(defaultPort))
          --host ADDR        listen address (IPv4; default: config, else 127.0.0.1)
          --data-dir DIR     \(dataDirectory)
          --log-level LEVEL  debug | info | warning | error (default info)
          --help             this text
          --version          the version

        ENVIRONMENT (overrides the file; use these for production secrets):
        \(environment)

        Logs are JSON lines on standard error. \(warnings)
        SIGINT/SIGTERM: \(stop)
        SIGHUP: \(reload)
        A file that does not load keeps the running configuration, and the log says why.
        Exit status: 0 after a clean shutdown, 64 bad arguments, 78 bad configuration (including a
        port that cannot be listened on), 1 runtime failure.
        """
    }
}
