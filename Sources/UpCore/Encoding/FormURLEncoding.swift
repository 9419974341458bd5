/// `application/x-www-form-urlencoded` bodies and percent-encoding of single values.
public enum FormURLEncoding {
    /// Percent-encodes `value` as UTF-8, keeping only RFC 3986 unreserved characters
    /// (`A-Z a-z 0-9 - . _ ~`); space becomes `%20`.
    ///
    /// Used for magic variables substituted into form callback bodies (qiniu-protocol.md §2,
    /// Appendix A.1): a key containing `&` or `=` cannot break the body.
    ///
    /// - Parameter value: Any text.
    /// - Returns: The encoded text (ASCII only).
    public static func percentEncode(_ value: some StringProtocol) -> String {
        percentEncode(String(value))
    }

    /// The same for a `String`, without generic iteration (not specialized across modules): it runs
    /// for every field of every form callback body a token carries. Text that needs no escape
    /// is returned as is.
    ///
    /// - Parameter value: Any text.
    /// - Returns: The encoded text (ASCII only).
    public static func percentEncode(_ value: String) -> String {
        if isUnreserved(value) { return value }
        var output = [UInt8]()
        output.reserveCapacity(value.utf8.count)
        appendPercentEncoded(value, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends ``percentEncode(_:)-(String)`` of `value` to `output` (bodies built as bytes).
    ///
    /// - Parameters:
    ///   - value: Any text.
    ///   - output: Bytes to append to.
    public static func appendPercentEncoded(_ value: String, to output: inout [UInt8]) {
        // Names and ids are mostly unreserved already: checked in one scan, copied in one go.
        if isUnreserved(value) {
            output.append(contentsOf: value.utf8)
            return
        }
        for byte in value.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`).
    ///
    /// - Parameters:
    ///   - text: Encoded text.
    ///   - plusAsSpace: Whether `+` means a space (form bodies) or itself (paths).
    /// - Returns: The decoded text, or `nil` for a malformed escape or invalid UTF-8.
    public static func percentDecode(_ text: some StringProtocol, plusAsSpace: Bool = true) -> String? {
        percentDecode(bytes: text.utf8, plusAsSpace: plusAsSpace)
    }

    /// Parses a form body into ordered `(name, value)` pairs.
    ///
    /// Pairs are separated by `&`; a pair without `=` has an empty value; empty pairs
    /// (`a=1&&b=2`) are skipped; duplicates are kept in order.
    ///
    /// - Parameter body: The raw body bytes.
    /// - Returns: The pairs, or `nil` when any name or value is not valid percent-encoded UTF-8.
    public static func parse(_ body: some Collection<UInt8>) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for piece in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let name: String
            let value: String
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                guard let n = percentDecode(bytes: piece[..<equals], plusAsSpace: true),
                    let v = percentDecode(bytes: piece[piece.index(after: equals)...], plusAsSpace: true)
                else { return nil }
                (name, value) = (n, v)
            } else {
                guard let n = percentDecode(bytes: piece, plusAsSpace: true) else { return nil }
                (name, value) = (n, "")
            }
            pairs.append((name, value))
        }
        return pairs
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Whether every byte of `value` is unreserved (scanned as a `Span`: faster than the view).
    private static func isUnreserved(_ value: String) -> Bool {
        let bytes = value.utf8.span
        var index = 0
        while index < bytes.count {
            if !isUnreserved(bytes[index]) { return false }
            index += 1
        }
        return true
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func percentDecode(bytes: some Collection<UInt8>, plusAsSpace: Bool) -> String? {
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < input.count,
                    let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(validating: output, as: UTF8.self)
    }
}
