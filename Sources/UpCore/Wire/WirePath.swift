/// Shared rules of the upload URL paths (qiniu-protocol.md §4, §5).
///
/// **Where percent-decoding happens** (one rule for every parser): the path arrives exactly as
/// received (still percent-encoded; a `?query` is cut off). It is split on `/` *first* — so an
/// encoded `%2F` never splits a segment, and empty segments stay in place (`/x:empty//next`,
/// §4.3) — and *then* each segment is percent-decoded on its own (`+` stays `+`). B64 values
/// never need decoding (their alphabet is unreserved), but a client that writes `x%3Aname` or
/// `%3D` padding is accepted the same as `x:name` / `=`.
enum WirePath {
    /// Splits `path` after `prefix` (e.g. `"/mkfile/"`) into decoded segments.
    ///
    /// - Returns: The segments after the prefix (at least one, possibly empty).
    /// - Throws: `.badRequest` when the prefix is missing or a segment is not valid
    ///   percent-encoded UTF-8.
    static func segments(_ path: some StringProtocol, after prefix: String) throws(UpError) -> [String] {
        var raw = Substring(path)
        // The first "?" byte: a Character search misses a "?" joined to a combining mark after it
        // or to a prepend character (U+0600…) before it.
        if let query = raw.utf8.firstIndex(of: UInt8(ascii: "?")) { raw = raw[..<query] }
        guard raw.utf8.starts(with: prefix.utf8) else {
            throw UpError(.badRequest, detail: "path does not start with \(prefix)")
        }
        let rest = raw.utf8.dropFirst(prefix.utf8.count)
        var segments: [String] = []
        for piece in rest.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            // Split points are ASCII, so every piece of a valid String is valid UTF-8.
            let text = String(decoding: piece, as: UTF8.self)
            guard let segment = FormURLEncoding.percentDecode(text, plusAsSpace: false) else {
                throw UpError(.badRequest, detail: "bad percent-encoding in path segment \(segments.count + 1)")
            }
            segments.append(segment)
        }
        return segments
    }

    /// Parses a decimal integer: ASCII digits only (no sign, no spaces), at most 18 digits.
    ///
    /// - Parameters:
    ///   - text: The segment.
    ///   - field: Name for the error detail.
    ///   - range: Allowed values.
    /// - Throws: `.badRequest` naming `field`.
    static func integer(_ text: String, field: String, in range: ClosedRange<Int64>) throws(UpError) -> Int64 {
        let digits = text.utf8
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw UpError(.badRequest, detail: "\(field) is not a decimal number: \(text.prefix(32))")
        }
        let value = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        guard range.contains(value) else {
            throw UpError(.badRequest, detail: "\(field) \(value) outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// Decodes a B64 segment (padding optional, §Notation) holding UTF-8 text that
    /// ``ProtocolText`` allows.
    ///
    /// - Throws: `.badRequest` naming `field`.
    static func base64Text(_ text: String, field: String) throws(UpError) -> String {
        let value = try base64UTF8(text, field: field)
        try ProtocolText.check(value, field: field)
        return value
    }

    /// B64 (padding optional) holding UTF-8 text, nothing more.
    private static func base64UTF8(_ text: String, field: String) throws(UpError) -> String {
        guard let bytes = URLSafeBase64.decode(text) else {
            throw UpError(.badRequest, detail: "\(field) is not URL-safe base64")
        }
        guard let value = String(validating: bytes, as: UTF8.self) else {
            throw UpError(.badRequest, detail: "\(field) is not UTF-8")
        }
        return value
    }

    /// Decodes a B64 segment holding an object key: B64 UTF-8, then ``ObjectKeyRule`` (which
    /// covers NUL with its own `invalid key`).
    ///
    /// - Throws: `.badRequest` for bad B64 or UTF-8, `.invalidKey` for a key the rule refuses.
    static func base64Key(_ text: String) throws(UpError) -> String {
        let key = try base64UTF8(text, field: "key")
        try ObjectKeyRule.check(key)
        return key
    }

    /// Encodes a value as a path segment: padded B64 (what every SDK sends, §Notation).
    static func base64Segment(_ text: String) -> String { URLSafeBase64.encode(text.utf8) }

    /// Percent-encodes a raw (non-B64) segment: everything but RFC 3986 unreserved characters and `:`.
    static func rawSegment(_ text: String) -> String {
        FormURLEncoding.percentEncode(text).replacing("%3A", with: ":")
    }

    /// Walks `name/value` pairs positionally; an odd count means a name without a value.
    ///
    /// - Throws: `.badRequest` for the dangling name, or whatever `body` throws.
    static func pairs(
        _ segments: ArraySlice<String>, _ body: (_ name: String, _ value: String) throws(UpError) -> Void
    ) throws(UpError) {
        guard segments.count % 2 == 0 else {
            throw UpError(.badRequest, detail: "path parameter \(segments.last ?? "") has no value")
        }
        var index = segments.startIndex
        while index < segments.endIndex {
            try body(segments[index], segments[index + 1])
            index += 2
        }
    }

    /// Compares `(name, value)` lists in order (tuples are not `Equatable`).
    static func equal(_ a: [(name: String, value: String)], _ b: [(name: String, value: String)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
