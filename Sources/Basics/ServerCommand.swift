public import Foundation

/// The command line every Upgate server shares: `[--config FILE] [--port N] [--host ADDR]
/// [--data-dir DIR] [--log-level LEVEL] [--help]`, with the same exit codes (64 bad arguments,
/// 78 bad configuration). Each executable's `main.swift` keeps only what is its own.
public struct ServerCommand: Sendable {
    /// The program name, prefixed to error messages.
    public let name: String
    /// A logger at the requested level, labelled with `name`.
    public let logger: Logger
    /// `--port`, if given.
    public let port: UInt16?
    /// `--host`, if given.
    public let host: String?
    /// `--data-dir`, if given.
    public let dataDirectory: String?
    private let configPath: String

    /// Parses `CommandLine.arguments`; prints `usage` and exits 0 for `--help`, exits 64 on bad arguments.
    public static func parse(name: String, usage: String, defaultConfig: String) -> ServerCommand {
        let arguments: Arguments
        do {
            arguments = try Arguments(
                Array(CommandLine.arguments.dropFirst()), options: ["config", "port", "host", "data-dir", "log-level"],
                flags: ["help"])
        } catch {
            fail(name, "\(error)\n\n\(usage)", status: 64)
        }
        if arguments.has("help") {
            print(usage)
            exit(0)
        }
        if let extra = arguments.positional.first { fail(name, "unexpected argument '\(extra)'", status: 64) }
        let level: Logger.Level
        switch arguments.value("log-level") ?? "info" {
        case "debug": level = .debug
        case "info": level = .info
        case "warning": level = .warning
        case "error": level = .error
        case let other: fail(name, "unknown log level '\(other)'", status: 64)
        }
        let port: UInt16?
        do {
            port = try arguments.integer("port", as: UInt16.self)
        } catch {
            fail(name, error.description, status: 64)
        }
        return ServerCommand(
            name: name, logger: Logger(label: name, minimumLevel: level), port: port, host: arguments.value("host"),
            dataDirectory: arguments.value("data-dir"), configPath: arguments.value("config") ?? defaultConfig)
    }

    /// Reads the configuration file and hands it, with the process environment, to `load`;
    /// exits 78 with the reason when either fails.
    public func loadConfiguration<Configuration>(
        _ load: (Data, [String: String]) throws -> Configuration
    ) -> Configuration {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: configPath))
            return try load(data, ProcessInfo.processInfo.environment)
        } catch {
            fail("cannot load configuration \(configPath): \(error)", status: 78)
        }
    }

    /// Prints `name: message` to standard error and exits with `status`.
    public func fail(_ message: String, status: Int32) -> Never { Self.fail(name, message, status: status) }

    private static func fail(_ name: String, _ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
        exit(status)
    }
}
