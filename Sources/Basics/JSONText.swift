/// Minimal JSON text helpers for hand-built lines (logs, metrics) where `JSONEncoder` would be
/// needless overhead.
public enum JSONText {
    /// Appends `value` as a quoted, escaped JSON string (RFC 8259 §7) to `output`.
    public static func appendString(_ value: String, to output: inout String) {
        output.append("\"")
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output.append("\\\"")
            case "\\": output.append("\\\\")
            case "\n": output.append("\\n")
            case "\r": output.append("\\r")
            case "\t": output.append("\\t")
            case let s where s.value < 0x20:
                let hex = String(s.value, radix: 16)
                output.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output.append("\"")
    }

    /// Returns `value` as a quoted, escaped JSON string.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendString(value, to: &out)
        return out
    }
}
