import ServerShell

/// `biz-server --help`.
let usage = ServerCommandLine.usage(
    name: "biz-server", summary: "issues Qiniu upload tokens and records verified upload callbacks.",
    defaultPort: 8080,
    dataDirectory: "directory of the SQLite store uploads.sqlite3 (default: config, else data/biz)",
    environment: """
          UPGATE_ACCESS_KEY           Qiniu AccessKey tokens are signed under (with UPGATE_SECRET_KEY:
                                      set both or neither, one alone stops the server)
          UPGATE_SECRET_KEY           Qiniu SecretKey
          UPGATE_API_KEYS             client=apikey[,client2=apikey2] (plaintext; hashed at load)
          UPGATE_ADMIN_TOKEN          the admin API's bearer token, >= 16 characters (hashed at load)
          UPGATE_BIZ_PUBLIC_BASE_URL  externally visible base URL for the callback URL in tokens
          UPGATE_UP_HOSTS             comma-separated up hosts handed to clients
          UPGATE_BIZ_DATABASE_URL     postgresql://user@host:5432/db: keep records, keys, webhook
                                      deliveries and rate limits there (shared by every instance;
                                      password from PGPASSWORD or a passfile); replaces "database"
        """,
    warnings: """
        A warning says when the development key pair or
        the development API key is in use, or no API client is configured.
        """,
    stop: "stop accepting, finish in-flight requests, exit 0.",
    reload: """
        reload the clients, keys, up hosts, limits, jwt block and admin token from the configuration
        file (the address, port, data directory, threads, connection limits and trusted proxies need
        a restart).
        """)
