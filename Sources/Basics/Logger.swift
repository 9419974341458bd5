import Foundation
import JSONText
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
        var line = start(level, message)
        for (key, value) in fields { Self.append(key, value, to: &line) }
        finish(&line, urgent: level >= .warning)
    }

    /// Writes a line at `level` with `fields` followed by `more` (fields gathered at run time,
    /// e.g. those a handler attaches to its request's access-log line).
    public func log(
        _ level: Level, _ message: String, _ fields: KeyValuePairs<String, Value>, more: [(key: String, value: Value)]
    ) {
        guard level >= minimumLevel else { return }
        var line = start(level, message)
        for (key, value) in fields { Self.append(key, value, to: &line) }
        for (key, value) in more { Self.append(key, value, to: &line) }
        finish(&line, urgent: level >= .warning)
    }

    /// Writes a line at `level` whose fields `write` appends straight as bytes (``Line``): no
    /// ``Value`` per field and no `String` per number. For lines written on every request (the
    /// access log); other lines read better with the dictionary form above.
    public func log(_ level: Level, _ message: String, writing write: (inout Line) -> Void) {
        guard level >= minimumLevel else { return }
        var line = Line(bytes: start(level, message))
        write(&line)
        finish(&line.bytes, urgent: level >= .warning)
    }

    /// The fields of a line being written (``log(_:_:writing:)``), appended in call order.
    public struct Line: ~Copyable {
        fileprivate var bytes: [UInt8]

        fileprivate init(bytes: [UInt8]) { self.bytes = bytes }

        /// Appends `key` (escaped: a field gathered at run time) with `value`.
        public mutating func add(_ key: String, value: Value) { Logger.append(key, value, to: &bytes) }

        /// Appends `key` with the string `value` (escaped).
        public mutating func add(_ key: StaticString, _ value: String) {
            appendKey(key)
            JSONText.appendString(value, to: &bytes)
        }

        /// Appends `key` with the integer `value`.
        public mutating func add(_ key: StaticString, _ value: Int64) {
            appendKey(key)
            JSONText.appendDecimal(value, to: &bytes)
        }

        /// Appends `key` with `thousandths / 1000` as a decimal number, written as `String(Double)`
        /// would write it (`0.311`, `12.5`, `3.0`): durations in milliseconds with microseconds.
        public mutating func add(_ key: StaticString, thousandths: Int64) {
            appendKey(key)
            if thousandths < 0 { bytes.append(UInt8(ascii: "-")) }
            let magnitude = thousandths.magnitude
            JSONText.appendDecimal(Int64(magnitude / 1000), to: &bytes)
            bytes.append(UInt8(ascii: "."))
            var fraction = magnitude % 1000
            var digits = 3
            while digits > 1 && fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            var divisor: UInt64 = digits == 3 ? 100 : digits == 2 ? 10 : 1
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction / divisor % 10))
                divisor /= 10
            }
        }

        /// `,"key":` for a key the caller knows needs no escaping (a literal of plain ASCII).
        private mutating func appendKey(_ key: StaticString) {
            bytes.append(UInt8(ascii: ","))
            bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { unsafe bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// `{"ts":…,"level":…,"logger":…,"msg":…`, built as UTF-8 bytes.
    private func start(_ level: Level, _ message: String) -> [UInt8] {
        var line: [UInt8] = []
        // An access line with a handler's fields (a token's) is about 480 bytes.
        line.reserveCapacity(640)
        line.append(contentsOf: #"{"ts":""#.utf8)
        RFC3339.appendUTC(millisecondsSince1970: Self.nowMilliseconds(), to: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: level.description.utf8)
        line.append(contentsOf: #"","logger":"#.utf8)
        JSONText.appendString(label, to: &line)
        line.append(contentsOf: #","msg":"#.utf8)
        JSONText.appendString(message, to: &line)
        return line
    }

    private func finish(_ line: inout [UInt8], urgent: Bool) {
        line.append(contentsOf: "}\n".utf8)
        sink.write(line, urgent: urgent)
    }

    fileprivate static func append(_ key: String, _ value: Value, to line: inout [UInt8]) {
        line.append(UInt8(ascii: ","))
        JSONText.appendString(key, to: &line)
        line.append(UInt8(ascii: ":"))
        switch value {
        case .string(let s): JSONText.appendString(s, to: &line)
        case .int(let i): JSONText.appendDecimal(i, to: &line)
        case .double(let d): line.append(contentsOf: (d.isFinite ? String(d) : "null").utf8)
        case .bool(let b): line.append(contentsOf: (b ? "true" : "false").utf8)
        }
    }

    /// Wall-clock milliseconds since 1970, rounded down.
    private static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
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
}
