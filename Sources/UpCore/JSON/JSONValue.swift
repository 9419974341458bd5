import JSONText

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
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// ``serialized()`` as UTF-8 bytes (what goes on the wire).
    public func serializedBytes() -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(128)
        write(to: &output)
        return output
    }

    /// Appends ``serialized()`` to `output`.
    ///
    /// - Parameter output: Text to append to.
    public func write(to output: inout String) {
        output += serialized()
    }

    /// Appends the serialized UTF-8 bytes to `output`.
    ///
    /// - Parameter output: Bytes to append to.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): JSONText.appendDecimal(value, to: &output)
        case .double(let value):
            // JSON has no NaN/Infinity; only reachable from hand-built values.
            if !value.isFinite {
                output.append(contentsOf: "null".utf8)
            } else if value.rounded() == value && abs(value) < 1e15 {
                output.append(contentsOf: (String(Int64(value)) + ".0").utf8)
            } else {
                output.append(contentsOf: "\(value)".utf8)
            }
        case .string(let value): JSONText.appendString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.appendString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }
}
