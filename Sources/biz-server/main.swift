import Basics
import BizServer
import Foundation

let usage = """
    biz-server — issues Qiniu upload tokens and records verified upload callbacks.

    USAGE: biz-server [--config FILE] [--port N] [--host ADDR] [--data-dir DIR] [--log-level LEVEL]
           biz-server keys create|list|revoke …   (API keys in the store; biz-server keys --help)

    OPTIONS:
      --config FILE      JSON configuration (default Config/biz-server.json)
      --port N           listen port, 0 = any free port (default: config, else 8080)
      --host ADDR        listen address (default: config, else 127.0.0.1)
      --data-dir DIR     directory of the SQLite store uploads.sqlite3 (default: config, else data/biz)
      --log-level LEVEL  debug | info | warning | error (default info)
      --help             this text

    ENVIRONMENT (overrides the file; use these for production secrets):
      UPGATE_ACCESS_KEY           Qiniu AccessKey tokens are signed under
      UPGATE_SECRET_KEY           Qiniu SecretKey
      UPGATE_API_KEYS             client=apikey[,client2=apikey2] (plaintext; hashed at load)
      UPGATE_ADMIN_TOKEN          the admin API's bearer token, >= 16 characters (hashed at load)
      UPGATE_BIZ_PUBLIC_BASE_URL  externally visible base URL for the callback URL in tokens
      UPGATE_UP_HOSTS             comma-separated up hosts handed to clients

    Logs are JSON lines on standard error. SIGINT/SIGTERM stop accepting, finish in-flight requests, exit 0.
    Exit status: 0 after a clean shutdown, 64 bad arguments, 78 bad configuration, 1 runtime failure.
    """

if CommandLine.arguments.dropFirst().first == "keys" { await KeysCommand.main(Array(CommandLine.arguments.dropFirst(2))) }
let command = ServerCommand.parse(name: "biz-server", usage: usage, defaultConfig: "Config/biz-server.json")
let logger = command.logger
var configuration = command.loadConfiguration(BizServerConfiguration.load(json:environment:))
if let port = command.port { configuration.port = port }
if let host = command.host { configuration.host = host }
if let directory = command.dataDirectory { configuration.dataDirectory = directory }

do {
    try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
    let storePath = (configuration.dataDirectory as NSString).appendingPathComponent("uploads.sqlite3")
    let store = try SQLiteUploadRecordStore(path: storePath, durableWrites: configuration.durableWrites)
    let keys = try SQLiteAPIKeyStore(directory: configuration.dataDirectory, durableWrites: configuration.durableWrites)
    let server = BizServer(configuration: configuration, store: store, keys: keys, logger: logger)
    try await server.run()
    logger.info("biz-server stopped")
} catch {
    logger.error("biz-server failed", ["error": .string("\(error)")])
    exit(1)
}
