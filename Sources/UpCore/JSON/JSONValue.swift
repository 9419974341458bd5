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
        case .int(let value): Self.appendDecimal(value, to: &output)
        case .double(let value):
            // JSON has no NaN/Infinity; only reachable from hand-built values.
            if !value.isFinite {
                output.append(contentsOf: "null".utf8)
            } else if value.rounded() == value && abs(value) < 1e15 {
                output.append(contentsOf: (String(Int64(value)) + ".0").utf8)
            } else {
                output.append(contentsOf: "\(value)".utf8)
            }
        case .string(let value): Self.writeString(value, to: &output)
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
                Self.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `value` in decimal (a JSON integer), most significant digit first: no `String`
    /// in between, and nothing reversed afterwards (reversing a slice of `output` copies it).
    static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var unit: UInt64 = 1
        while magnitude / unit >= 10 { unit *= 10 }
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(magnitude / unit % 10))
            unit /= 10
        } while unit > 0
    }

    /// Appends `value` as a quoted JSON string literal.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - output: Text to append to.
    public static func writeString(_ value: String, to output: inout String) {
        var bytes = [UInt8]()
        writeString(value, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` escaped for the inside of a JSON string literal, without quotes.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - output: Text to append to.
    public static func writeStringContent(_ value: String, to output: inout String) {
        var bytes = [UInt8]()
        writeStringContent(value, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` as a quoted JSON string literal, as UTF-8 bytes.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - output: Bytes to append to.
    public static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        writeStringContent(value, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `value` escaped for the inside of a JSON string literal (no quotes), as UTF-8.
    /// Only `"`, `\\` and control characters are escaped; everything else is copied raw.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - output: Bytes to append to.
    public static func writeStringContent(_ value: String, to output: inout [UInt8]) {
        // Most text (keys, tokens, URLs) has nothing to escape: copy it in one go.
        if !needsEscaping(value) {
            output.append(contentsOf: value.utf8)
            return
        }
        let hex = hexDigits
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
    }

    /// Whether any byte of `value` must be escaped (scanned as a `Span`: faster than the view).
    private static func needsEscaping(_ value: String) -> Bool {
        let bytes = value.utf8.span
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
