/// JSON text written by hand (RFC 8259): the string escaping and integer writing behind all the
/// JSON this project writes without `JSONEncoder` — `UpCore.JSONValue`, the policy and callback
/// bodies, replies, log lines — so one rule decides what a string becomes wherever it is written.
///
/// Work is done on UTF-8 bytes: only `"`, `\` and control characters (all ASCII) are escaped
/// (`\n`, `\r`, `\t`, `\b`, `\f` in their short form, the others as `\u00XX`, as Foundation's
/// `JSONEncoder` and Python's `json` write them), so every other byte, including those of
/// multi-byte characters, is copied as is, and `/` is never escaped. A string with nothing to
/// escape is copied in one go. A leaf module with no dependencies: both the protocol core and the
/// server plumbing use it.
public enum JSONText {
    /// Appends `value` as a quoted, escaped JSON string to `output`.
    public static func appendString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        appendStringContent(value, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `value` escaped for the inside of a JSON string literal (no quotes) to `output`.
    public static func appendStringContent(_ value: String, to output: inout [UInt8]) {
        let span = value.utf8.span
        guard needsEscaping(span) else {
            // Straight from the string's storage: appending the `UTF8View` goes through the
            // generic sequence path, several times slower for the short strings of a log line.
            unsafe span.withUnsafeBufferPointer { unsafe output.append(contentsOf: $0) }
            return
        }
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
                output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
    }

    /// Appends `value` as a quoted, escaped JSON string to `output`.
    public static func appendString(_ value: String, to output: inout String) {
        if !needsEscaping(value.utf8.span) {
            output += "\""
            output += value
            output += "\""
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 8)
        appendString(value, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` escaped for the inside of a JSON string literal (no quotes) to `output`.
    public static func appendStringContent(_ value: String, to output: inout String) {
        if !needsEscaping(value.utf8.span) {
            output += value
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 8)
        appendStringContent(value, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Returns `value` as a quoted, escaped JSON string.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendString(value, to: &out)
        return out
    }

    /// Appends `value` in decimal (a JSON integer) without a `String` in between: one division
    /// per digit, the digits appended lowest first and then swapped into order in place. Not
    /// through an `InlineArray` (Apple platforms have it from their 26 releases; UpCore builds
    /// for macOS 15 and iOS 18) nor a reversed slice of `output` (which copies).
    public static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        let start = output.count
        var magnitude = value.magnitude
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        var low = start
        var high = output.count - 1
        while low < high {
            output.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    /// Whether any of a string's UTF-8 `bytes` must be escaped. Scanning them as a `Span` is about
    /// three times faster than iterating the `UTF8View` (tokens are hundreds of bytes long).
    private static func needsEscaping(_ bytes: Span<UInt8>) -> Bool {
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
