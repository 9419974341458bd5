import UpCore

/// The non-file fields of a form upload (qiniu-protocol.md §6), collected while the body streams.
///
/// Only the names the protocol defines are kept — `token`, `key`, `crc32`, `accept`, `fname`,
/// `x:<name>` and `x-qn-meta-<name>`; every other field is ignored (§6: "Servers should ignore
/// unknown names"), so a client cannot make the server hold arbitrary data. A repeated name: the
/// last value wins, except that `x:` / `x-qn-meta-` entries keep their first position.
struct FormFields: Sendable {
    /// Most bytes of kept field values in one request; more → 400. Real forms carry a token (a
    /// few hundred bytes), a key and a handful of variables; this bounds memory per request.
    static let maxTotalBytes = 1 << 20

    /// The upload token (§1.1: form uploads carry it in the `token` field).
    var token: String?
    /// The `key` field; `""` when sent empty — "key supplied, empty string" (§1.3 [ambiguous]).
    var key: String?
    /// The `crc32` field as sent (decimal, unsigned); parsed by ``expectedCRC32()``.
    var crc32: String?
    /// The `accept` field: the response Content-Type wanted (old-IE trick, §6).
    var accept: String?
    /// The `fname` field ([ambiguous] §6: newer docs mention it; overrides the part filename).
    var fname: String?
    /// `x:<name>` custom variables in arrival order (§2).
    var customVariables: [(name: String, value: String)] = []
    /// `x-qn-meta-<name>` metadata in arrival order (§2).
    var metadata: [(name: String, value: String)] = []
    private var keptBytes = 0

    /// Whether a field called `name` is one this form keeps (its bytes are then collected).
    static func isKept(_ name: String) -> Bool {
        switch name {
        case "token", "key", "crc32", "accept", "fname": return true
        default: return name.hasPrefix("x:") || isMetadata(name)
        }
    }

    /// `x-qn-meta-` prefix; ASCII case-insensitive, as HTTP-style metadata names are.
    static func isMetadata(_ name: String) -> Bool {
        let prefix = "x-qn-meta-".utf8
        guard name.utf8.count > prefix.count else { return false }
        return zip(name.utf8, prefix).allSatisfy { (($0 >= 0x41 && $0 <= 0x5A) ? $0 + 32 : $0) == $1 }
    }

    /// Records one complete field.
    ///
    /// - Throws: ``UpError`` `.badRequest` when the value is not UTF-8, name or value hold NUL
    ///   (``ProtocolText``), or the kept fields together exceed ``maxTotalBytes``.
    mutating func set(name: String, value bytes: [UInt8]) throws(UpError) {
        guard Self.isKept(name) else { return }
        keptBytes += bytes.count + name.utf8.count
        guard keptBytes <= Self.maxTotalBytes else {
            throw UpError(.badRequest, detail: "form: fields exceed \(Self.maxTotalBytes) bytes")
        }
        guard let value = String(validating: bytes, as: UTF8.self) else {
            throw UpError(.badRequest, detail: "form: field \(name.prefix(64)) is not UTF-8")
        }
        if name == "key" { try ObjectKeyRule.check(value) }   // 400 invalid key, before the generic NUL rule
        try ProtocolText.check(name, field: "form: a field name")
        try ProtocolText.check(value, field: "form: field " + name)
        switch name {
        case "token": token = value
        case "key": key = value
        case "crc32": crc32 = value
        case "accept": accept = value
        case "fname": fname = value
        default:
            if name.hasPrefix("x:") {
                Self.upsert(&customVariables, name: name, value: value)
            } else {
                Self.upsert(&metadata, name: name, value: value)
            }
        }
    }

    /// The CRC-32 the client announced, or `nil` when it sent none (or an empty field).
    ///
    /// §6/§7.3: decimal *unsigned*. A negative value is accepted as the signed 32-bit view of the
    /// same CRC (some clients print it that way); anything else is malformed.
    /// - Throws: ``UpError`` `.badRequest` for a value that is not a 32-bit integer.
    func expectedCRC32() throws(UpError) -> UInt32? {
        guard let text = crc32?.strippingBlanks(), !text.isEmpty else { return nil }
        if let unsigned = UInt32(text) { return unsigned }
        if let signed = Int32(text), signed < 0 { return UInt32(bitPattern: signed) }
        throw UpError(.badRequest, detail: "form: crc32 \(text.prefix(32)) is not a 32-bit integer")
    }

    /// The response Content-Type from `accept`, if it is safe to put in a header (visible ASCII
    /// and spaces only: a CR or LF would let a client inject headers); otherwise `nil`.
    var acceptedContentType: String? {
        guard let accept, !accept.isEmpty, accept.utf8.count <= 256,
            accept.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || (0x21...0x7E).contains($0) })
        else { return nil }
        return accept
    }

    private static func upsert(_ list: inout [(name: String, value: String)], name: String, value: String) {
        if let index = list.firstIndex(where: { $0.name == name }) {
            list[index].value = value
        } else {
            list.append((name, value))
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate func strippingBlanks() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
