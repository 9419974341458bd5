/// A PutPolicy `mimeLimit` (qiniu-protocol.md §1.3): a `;`-separated list of MIME types with `*`
/// allowed as the subtype (`image/*`) or the whole type, turned into a deny-list by a leading `!`
/// (`!application/json;text/plain`). Comparison ignores case and MIME parameters (`; charset=…`).
public struct MimeLimit: Sendable, Equatable {
    /// The patterns, lower-cased, without the `!`.
    public let patterns: [String]
    /// `true` for a deny-list.
    public let denies: Bool

    /// Parses a `mimeLimit` value. An empty list allows everything.
    public init(_ text: String) {
        var body = Substring(text.trimmingWhitespace())
        denies = body.hasPrefix("!")
        if denies { body = body.dropFirst() }
        patterns = body.split(separator: ";").map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
    }

    /// Whether an object of `mimeType` may be stored under this limit.
    public func allows(_ mimeType: String) -> Bool {
        guard !patterns.isEmpty else { return true }
        let type = mimeType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingWhitespace().lowercased() } ?? ""
        let matched = patterns.contains { Self.matches(pattern: $0, type: type) }
        return denies ? !matched : matched
    }

    private static func matches(pattern: String, type: String) -> Bool {
        if pattern == "*" || pattern == "*/*" { return true }
        if pattern.hasSuffix("/*") {
            return type.hasPrefix(pattern.dropLast())  // "image/" prefix
        }
        return pattern == type
    }
}

extension StringProtocol {
    // Foundation-free trim (UpCore avoids Foundation outside JSON); file-private to avoid clashes.
    fileprivate func trimmingWhitespace() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
