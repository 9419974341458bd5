/// The request-target (`path[?query]`) of an absolute URL: the part QBox and Qiniu signatures
/// cover (qiniu-protocol.md §3.2 — scheme, host and port are not signed).
public enum RequestTarget {
    /// Extracts `path[?query]` from `scheme://authority/path?query#fragment` without decoding.
    ///
    /// An empty path becomes `/` — what an HTTP client actually sends — so the up-server signs
    /// the same text the biz-server receives. Text without `://` is taken as a target already.
    ///
    /// - Parameter url: Absolute URL (e.g. a `callbackUrl`).
    /// - Returns: The request-target, fragment dropped.
    public static func of(url: String) -> String {
        // By bytes: a Character search misses a delimiter joined to a combining mark after it
        // (or to a prepend character before it), and an HTTP client splits by bytes.
        var rest = url.utf8[...]
        if let fragment = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<fragment] }
        guard let schemeEnd = rest.firstRange(of: "://".utf8) else { return String(decoding: rest, as: UTF8.self) }
        let afterAuthority = rest[schemeEnd.upperBound...]
        guard let start = afterAuthority.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") })
        else { return "/" }
        let target = String(decoding: afterAuthority[start...], as: UTF8.self)
        return afterAuthority[start] == UInt8(ascii: "?") ? "/" + target : target
    }
}
