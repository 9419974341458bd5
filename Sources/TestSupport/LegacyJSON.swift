import Foundation

/// The JSON text Foundation's `JSONEncoder` writes with sorted keys and unescaped slashes: how
/// earlier versions stored the outbox payloads and the object metadata column. Tests use it as
/// the oracle for the hand-written text that replaced it, so rows written before still compare
/// and read alike.
public enum LegacyJSON {
    /// `value` as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes it.
    public static func text(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
