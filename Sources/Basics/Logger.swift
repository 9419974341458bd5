public import Foundation
import Synchronization

/// A structured logger that writes one JSON object per line (JSON lines).
///
/// Every line has `ts` (RFC 3339, UTC, milliseconds), `level`, `msg`, then the caller's fields.
/// Values are strings or numbers; nothing is interpolated into `msg` so logs stay greppable and
/// machine-readable. Secrets are never passed to a logger (DESIGN.md, "Secrets").
///
/// ```swift
/// let log = Logger(label: "biz-server")
/// log.info("listening", ["port": .int(8080)])
/// ```
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        /// Verbose diagnostics.
        case debug
        /// Normal operation.
        case info
        /// Something unexpected that the process survived.
        case warning
        /// A failure that needs attention.
        case error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The name written in the `level` field.
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// A field value: JSON string, integer or floating-point number, or boolean.
    public enum Value: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        /// A string.
        case string(String)
        /// An integer.
        case int(Int64)
        /// A floating-point number.
        case double(Double)
        /// A boolean.
        case bool(Bool)

        public init(stringLiteral value: String) { self = .string(value) }
        public init(integerLiteral value: Int64) { self = .int(value) }
    }

    /// The component name, written as `logger` on every line.
    public let label: String
    /// Lines below this level are dropped.
    public var minimumLevel: Level
    private let sink: LogSink

    /// Creates a logger writing to `sink` (standard error by default).
    public init(label: String, minimumLevel: Level = .info, sink: LogSink = .standardError) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    /// Writes a line at `level` if it passes `minimumLevel`.
    public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, Value> = [:]) {
        guard level >= minimumLevel else { return }
        var line = "{\"ts\":\"\(Self.timestamp())\",\"level\":\"\(level)\",\"logger\":"
        JSONText.appendString(label, to: &line)
        line += ",\"msg\":"
        JSONText.appendString(message, to: &line)
        for (key, value) in fields {
            line += ","
            JSONText.appendString(key, to: &line)
            line += ":"
            switch value {
            case .string(let s): JSONText.appendString(s, to: &line)
            case .int(let i): line += String(i)
            case .double(let d): line += d.isFinite ? String(d) : "null"
            case .bool(let b): line += b ? "true" : "false"
            }
        }
        line += "}\n"
        sink.write(line)
    }

    /// Logs at `.debug`.
    public func debug(_ message: String, _ fields: KeyValuePairs<String, Value> = [:]) { log(.debug, message, fields) }
    /// Logs at `.info`.
    public func info(_ message: String, _ fields: KeyValuePairs<String, Value> = [:]) { log(.info, message, fields) }
    /// Logs at `.warning`.
    public func warning(_ message: String, _ fields: KeyValuePairs<String, Value> = [:]) {
        log(.warning, message, fields)
    }
    /// Logs at `.error`.
    public func error(_ message: String, _ fields: KeyValuePairs<String, Value> = [:]) { log(.error, message, fields) }

    private static func timestamp() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

/// Where log lines go. `standardError` for processes; `memory` for tests that read the log back.
public final class LogSink: Sendable {
    private let capturing: Bool
    private let lines = Mutex<[String]>([])

    private init(capturing: Bool) { self.capturing = capturing }

    /// Writes each line to standard error in one `write` call, so concurrent lines never interleave.
    public static let standardError = LogSink(capturing: false)

    /// A sink that keeps lines in memory; read them with ``capturedLines``.
    public static func memory() -> LogSink { LogSink(capturing: true) }

    /// The lines written so far (memory sinks only; empty otherwise).
    public var capturedLines: [String] { lines.withLock { $0 } }

    func write(_ line: String) {
        if capturing {
            lines.withLock { $0.append(line) }
        } else {
            FileHandle.standardError.write(Data(line.utf8))
        }
    }
}
