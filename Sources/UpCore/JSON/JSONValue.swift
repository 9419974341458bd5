/// A JSON value that keeps what `JSONSerialization` loses: object key order, and the difference
/// between integers and floating-point numbers.
///
/// Used to keep unknown ``PutPolicy`` fields in order and for callback bodies and replies.
/// Parse with ``parse(_:)``, write with ``serialized()`` (compact, `/` not escaped, non-ASCII raw).
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; members in document order. Duplicate names are kept as written.
    case object([(key: String, value: JSONValue)])

    /// Structural equality; objects compare member lists in order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.int(a), .int(b)): a == b
        case let (.double(a), .double(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The value of member `key` of an object (the *last* one if the name repeats, as Python's
    /// and Go's decoders do); `nil` for a missing member or a non-object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// The string payload, or `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// An integer payload; also an integral `.double` that fits in `Int64`. `nil` otherwise.
    public var int64Value: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value):
            value.rounded() == value && value >= -9.223_372_036_854_775_808e18 && value < 9.223_372_036_854_775_808e18
                ? Int64(value) : nil
        default: nil
        }
    }

    /// Compact JSON text (RFC 8259): no whitespace, members in order, `/` not escaped,
    /// non-ASCII written as raw UTF-8, control characters as `\uXXXX` (or their short escapes).
    public func serialized() -> String {
        var output = ""
        write(to: &output)
        return output
    }

    /// Appends ``serialized()`` to `output`.
    ///
    /// - Parameter output: Text to append to.
    public func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            // JSON has no NaN/Infinity; only reachable from hand-built values.
            if value.isFinite {
                output += value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) + ".0" : "\(value)"
            } else {
                output += "null"
            }
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(member.key, to: &output)
                output += ":"
                member.value.write(to: &output)
            }
            output += "}"
        }
    }

    /// Appends `value` as a quoted JSON string literal.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - output: Text to append to.
    public static func writeString(_ value: String, to output: inout String) {
        output += "\""
        writeStringContent(value, to: &output)
        output += "\""
    }

    /// Appends `value` escaped for the inside of a JSON string literal, without quotes.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - output: Text to append to.
    public static func writeStringContent(_ value: String, to output: inout String) {
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case let s where s.value < 0x20:
                let hex = String(s.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
    }
}
