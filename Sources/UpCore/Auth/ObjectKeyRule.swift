/// What an object key may be, the one rule every entry point applies (qiniu-protocol.md §1.3,
/// docs/PROTOCOL.md "Keys"): UTF-8 text of at most ``maxBytes`` bytes without NUL (U+0000).
///
/// - UTF-8: Qiniu keys are UTF-8. Every decoder (form fields, B64 path segments, percent-decoded
///   paths, JSON) already refuses other bytes, so a `String` that reaches this rule is UTF-8.
/// - ``maxBytes``: the limit of Qiniu's put-policy document ("最大为 750 字节").
/// - No NUL: PostgreSQL's `text` cannot hold it (the index write would fail after the bytes were
///   stored) and C string interfaces would cut the key there, so two different keys could name
///   one object. Refused before anything is stored.
///
/// The empty key is a key (§1.1: scope `bucket:` names it); whether a route accepts it is the
/// route's decision.
public enum ObjectKeyRule {
    /// Longest key, in UTF-8 bytes.
    public static let maxBytes = 750

    /// Why `key` is not a valid key, or `nil` when it is one (inlinable, like
    /// ``ProtocolText/allows(_:)``, to be specialized where it is called).
    @inlinable
    public static func violation(in key: some StringProtocol) -> String? {
        if key.utf8.count > maxBytes { return "key longer than \(maxBytes) bytes" }
        if !ProtocolText.allows(key) { return "key contains NUL" }
        return nil
    }

    /// Whether `key` is a valid key.
    @inlinable
    public static func allows(_ key: some StringProtocol) -> Bool { violation(in: key) == nil }

    /// Checks `key`.
    ///
    /// - Throws: ``UpError`` `.invalidKey` (400) naming the violation in its log-only detail.
    public static func check(_ key: some StringProtocol) throws(UpError) {
        if let violation = violation(in: key) { throw UpError(.invalidKey, detail: violation) }
    }
}
