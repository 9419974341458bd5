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
        var rest = Substring(url)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        guard let schemeEnd = rest.firstRange(of: "://") else { return String(rest) }
        let afterAuthority = rest[schemeEnd.upperBound...]
        guard let start = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = afterAuthority[start...]
        return target.first == "?" ? "/" + target : String(target)
    }
}
