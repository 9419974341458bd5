import Basics
import Foundation
import UpServer

let usage = """
    up-server — a self-hostable Qiniu-compatible upload server (form, resumable v1 and v2,
    callbacks with a durable outbox, management stat/download).

    USAGE: up-server [--config FILE] [--port N] [--host ADDR] [--data-dir DIR] [--log-level LEVEL]

    OPTIONS:
      --config FILE      JSON configuration (default Config/up-server.json)
      --port N           listen port, 0 = any free port (default: config, else 9000)
      --host ADDR        listen address (default: config, else 127.0.0.1)
      --data-dir DIR     blobs, index.sqlite3 and ctx-secret live here (default: config, else data/up)
      --log-level LEVEL  debug | info | warning | error (default info)
      --help             this text

    ENVIRONMENT (overrides the file; use these for production secrets):
      UPGATE_ACCESS_KEY          Qiniu AccessKey whose upload tokens are accepted (with UPGATE_SECRET_KEY,
                                 replaces the file's key list); it also signs callbacks
      UPGATE_SECRET_KEY          its SecretKey
      UPGATE_UP_PUBLIC_BASE_URL  externally visible base URL returned as "host" (keep it stable)
      UPGATE_CTX_SECRET          secret authenticating ctx values (share it between nodes sharing the
                                 data directory); default: generated into <data-dir>/ctx-secret

    Logs are JSON lines on standard error. SIGINT/SIGTERM stop accepting, finish in-flight requests, exit 0.
    Exit status: 0 after a clean shutdown, 64 bad arguments, 78 bad configuration, 1 runtime failure.
    """

let command = ServerCommand.parse(name: "up-server", usage: usage, defaultConfig: "Config/up-server.json")
let logger = command.logger
var configuration = command.loadConfiguration(UpServerConfiguration.load(json:environment:))
if let port = command.port { configuration.port = port }
if let host = command.host { configuration.host = host }
if let directory = command.dataDirectory { configuration.dataDirectory = directory }

let server: UpServer
do {
    server = try UpServer.open(configuration: configuration, logger: logger)
} catch let error as ConfigurationError {
    command.fail("bad configuration: \(error)", status: 78)
} catch {
    logger.error("up-server cannot open its data directory", ["error": .string("\(error)")])
    exit(1)
}
do {
    try await server.run()
    logger.info("up-server stopped")
} catch {
    logger.error("up-server failed", ["error": .string("\(error)")])
    exit(1)
}
