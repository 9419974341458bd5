public import Basics
import UpCore

/// A server's JSON configuration file, read strictly: a syntax error names its line and column,
/// a misspelt key is refused with the nearest known one, a value of the wrong type says what was
/// expected (``ConfigurationObject``). Every failure is one ``ConfigurationError`` line, e.g.
///
/// ```text
/// invalid JSON in Config/biz-server.json at line 12, column 5: trailing comma
/// unknown key "prot" in Config/biz-server.json (did you mean "port"?)
/// ```
public enum ConfigurationFile {
    /// Parses `bytes` (the content of `source`, the path as the user gave it) into its top-level
    /// object.
    ///
    /// - Throws: ``ConfigurationError`` for text that is not JSON or not an object.
    public static func parse(_ bytes: [UInt8], source: String) throws(ConfigurationError) -> ConfigurationObject {
        let value: JSONValue
        do {
            value = try JSONValue.parseDocument(bytes)
        } catch {
            throw syntaxError(error, in: bytes, source: source)
        }
        guard case .object(let members) = value else {
            throw ConfigurationError("\(source) must hold one JSON object ({ … }), not \(ConfigurationObject.kind(of: value))")
        }
        return ConfigurationObject(members: members, path: "", source: source)
    }

    /// `invalid JSON in <source> at line L, column C: <reason>`. A trailing comma is named as
    /// such, at the comma (the parser notices it only at the `}` or `]` after it).
    static func syntaxError(_ error: JSONValue.SyntaxError, in bytes: [UInt8], source: String) -> ConfigurationError {
        var offset = min(error.offset, bytes.count)
        var reason = error.reason
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") || bytes[offset] == UInt8(ascii: "]") {
            var before = offset - 1
            while before >= 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[before]) { before -= 1 }
            if before >= 0, bytes[before] == UInt8(ascii: ",") {
                offset = before
                reason = "trailing comma"
            }
        }
        if offset == bytes.count { reason = "unexpected end of file (\(reason))" }
        let (line, column) = position(of: offset, in: bytes)
        return ConfigurationError("invalid JSON in \(source) at line \(line), column \(column): \(reason)")
    }

    /// 1-based line and column (in characters) of byte `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1
        return (line, column)
    }
}
