/// How long a new key lives: `--expires 90d` on the command line, `"expires": "90d"` in
/// `POST /v1/admin/keys`.
///
/// A whole number of seconds, minutes, hours or days (`3600s`, `30m`, `12h`, `90d`), at most ten
/// years. The one place this syntax is read, so the CLI and the API cannot drift apart.
enum KeyLifetime {
    /// The longest lifetime, seconds (3650 days).
    static let maxSeconds: Int64 = 3650 * 86_400

    /// What the syntax looks like, for error messages.
    static let help = "a whole number of s, m, h or d, e.g. 90d or 12h (at most 3650d)"

    /// The lifetime `text` names, in seconds; nil when it is not one.
    static func seconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard let unit = bytes.last, bytes.count >= 2, bytes.count <= 11 else { return nil }
        let digits = bytes.dropLast()
        guard digits.first != UInt8(ascii: "0"), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let number = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        let scale: Int64
        switch unit {
        case UInt8(ascii: "s"): scale = 1
        case UInt8(ascii: "m"): scale = 60
        case UInt8(ascii: "h"): scale = 3600
        case UInt8(ascii: "d"): scale = 86_400
        default: return nil
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: scale)
        guard !overflow, seconds <= maxSeconds else { return nil }
        return seconds
    }
}
