import ServerShell

/// `up-server --help`.
let usage = ServerCommandLine.usage(
    name: "up-server",
    summary: """
        a self-hostable Qiniu-compatible upload server (form, resumable v1 and v2,
        callbacks with a durable outbox, management stat/download).

        up-server migrate [--config FILE] [--data-dir DIR]: with up-server stopped, copies the
        SQLite index and blob files of the data directory into the configured PostgreSQL database
        and S3 blob store (up-server migrate --help).
        """,
    defaultPort: 9000,
    dataDirectory: "blobs, index.sqlite3 and ctx-secret live here (default: config, else data/up)",
    environment: """
          UPGATE_ACCESS_KEY          Qiniu AccessKey whose upload tokens are accepted (with UPGATE_SECRET_KEY,
                                     replaces the file's key list; set both or neither, one alone stops the
                                     server); it also signs callbacks
          UPGATE_SECRET_KEY          its SecretKey
          UPGATE_UP_PUBLIC_BASE_URL  externally visible base URL returned as "host" (keep it stable)
          UPGATE_CTX_SECRET          secret authenticating ctx values (share it between nodes sharing the
                                     data directory); default: generated into <data-dir>/ctx-secret
        """,
    warnings: "A warning says when the development key pair is accepted.",
    stop: "stop accepting, finish in-flight requests, stop the outbox retrier and the sweeper, exit 0.",
    reload: "reload the key pairs and buckets from the configuration file (the rest needs a restart).")
