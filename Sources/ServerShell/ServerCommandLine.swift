public import Basics
import Foundation

/// The command line both servers share: `[--config FILE] [--port N] [--host ADDR]
/// [--data-dir DIR] [--log-level LEVEL] [--help] [--version]`.
///
/// `--help` prints the usage and `--version` the version line (``UpgateVersion``), both exit 0;
/// a bad argument prints one line and exits 64.
public struct ServerCommandLine: Sendable, Equatable {
    /// The program name, prefixed to every line it prints.
    public let name: String
    /// The configuration file, as given (default: the server's `Config/…` file).
    public let configPath: String
    /// `--log-level` (default info).
    public let logLevel: Logger.Level
    /// `--port`, `--host` and `--data-dir`, which override the file.
    public let overrides: Overrides

    /// What the command line sets over the configuration file.
    public struct Overrides: Sendable, Equatable {
        /// `--port`.
        public var port: UInt16?
        /// `--host`.
        public var host: String?
        /// `--data-dir`.
        public var dataDirectory: String?

        /// Creates overrides.
        public init(port: UInt16? = nil, host: String? = nil, dataDirectory: String? = nil) {
            self.port = port
            self.host = host
            self.dataDirectory = dataDirectory
        }
    }

    /// What parsing decided: run, or print something and exit 0, or fail with exit 64.
    public enum Outcome: Sendable, Equatable {
        /// Run with this command line.
        case run(ServerCommandLine)
        /// Print this text to standard output and exit 0 (`--help`, `--version`).
        case print(String)
        /// Print this message and exit 64.
        case usageError(String)
    }

    /// Parses `arguments` (without the program name).
    public static func parse(
        _ arguments: [String], name: String, usage: String, defaultConfig: String
    ) -> Outcome {
        let parsed: Arguments
        do {
            parsed = try Arguments(
                arguments, options: ["config", "port", "host", "data-dir", "log-level"], flags: ["help", "version"])
        } catch {
            return .usageError("\(error) (see --help)")
        }
        if parsed.has("help") { return .print(usage) }
        if parsed.has("version") { return .print(UpgateVersion.line(for: name)) }
        if let extra = parsed.positional.first { return .usageError("unexpected argument '\(extra)' (see --help)") }
        let level: Logger.Level
        switch parsed.value("log-level") ?? "info" {
        case "debug": level = .debug
        case "info": level = .info
        case "warning": level = .warning
        case "error": level = .error
        case let other: return .usageError("--log-level must be debug, info, warning or error, got '\(other)'")
        }
        var overrides = Overrides(host: parsed.value("host"), dataDirectory: parsed.value("data-dir"))
        if let text = parsed.value("port") {
            guard let port = UInt16(text) else { return .usageError("--port must be a number 0…65535, got '\(text)'") }
            overrides.port = port
        }
        return .run(ServerCommandLine(
            name: name, configPath: parsed.value("config") ?? defaultConfig, logLevel: level, overrides: overrides))
    }

    /// Creates a command line (what ``parse(_:name:usage:defaultConfig:)`` returns for `.run`).
    public init(name: String, configPath: String, logLevel: Logger.Level = .info, overrides: Overrides = Overrides()) {
        self.name = name
        self.configPath = configPath
        self.logLevel = logLevel
        self.overrides = overrides
    }

    /// Prints `<name>: <message>` to standard error and exits with `status`.
    public func fail(_ message: String, status: Int32) -> Never { Self.fail(name, message, status: status) }

    /// Prints `<name>: <message>` to standard error and exits with `status`.
    public static func fail(_ name: String, _ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
        exit(status)
    }
}
