import Basics
import BizServer
import Foundation

let usage = """
    biz-server — issues Qiniu upload tokens and records verified upload callbacks.

    USAGE: biz-server [--config FILE] [--port N] [--host ADDR] [--data-dir DIR] [--log-level LEVEL]

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
      UPGATE_BIZ_PUBLIC_BASE_URL  externally visible base URL for the callback URL in tokens
      UPGATE_UP_HOSTS             comma-separated up hosts handed to clients

    Logs are JSON lines on standard error. SIGINT/SIGTERM stop accepting, finish in-flight requests, exit 0.
    Exit status: 0 after a clean shutdown, 64 bad arguments, 78 bad configuration, 1 runtime failure.
    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("biz-server: \(message)\n".utf8))
    exit(status)
}

let arguments: Arguments
do {
    arguments = try Arguments(
        Array(CommandLine.arguments.dropFirst()), options: ["config", "port", "host", "data-dir", "log-level"],
        flags: ["help"])
} catch {
    fail("\(error)\n\n\(usage)", status: 64)
}
if arguments.has("help") {
    print(usage)
    exit(0)
}
guard arguments.positional.isEmpty else { fail("unexpected argument '\(arguments.positional[0])'", status: 64) }

let level: Logger.Level
switch arguments.value("log-level") ?? "info" {
case "debug": level = .debug
case "info": level = .info
case "warning": level = .warning
case "error": level = .error
case let other: fail("unknown log level '\(other)'", status: 64)
}
let logger = Logger(label: "biz-server", minimumLevel: level)

var configuration: BizServerConfiguration
let configPath = arguments.value("config") ?? "Config/biz-server.json"
do {
    let data = try Data(contentsOf: URL(fileURLWithPath: configPath))
    configuration = try BizServerConfiguration.load(json: data, environment: ProcessInfo.processInfo.environment)
    if let port = try arguments.integer("port", as: UInt16.self) { configuration.port = port }
    if let host = arguments.value("host") { configuration.host = host }
    if let directory = arguments.value("data-dir") { configuration.dataDirectory = directory }
} catch let error as Arguments.ParseError {
    fail(error.description, status: 64)
} catch {
    fail("cannot load configuration \(configPath): \(error)", status: 78)
}

do {
    try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
    let storePath = (configuration.dataDirectory as NSString).appendingPathComponent("uploads.sqlite3")
    let store = try SQLiteUploadRecordStore(path: storePath, durableWrites: configuration.durableWrites)
    let server = BizServer(configuration: configuration, store: store, logger: logger)
    try await server.run()
    logger.info("biz-server stopped")
} catch {
    logger.error("biz-server failed", ["error": .string("\(error)")])
    exit(1)
}
