/// Pieces of a `callbackUrl` the deliverer needs besides the request-target (which
/// `RequestTarget.of(url:)` gives): the `Host` to send and sign, and a loggable form.
///
/// Delimiters are found by byte, as libcurl finds them (and `RequestTarget`): a Character search
/// misses one joined to a combining mark after it, e.g. a `?` whose query would then be logged.
enum CallbackURL {
    /// `host[:port]` of an absolute URL, as an HTTP client puts it into `Host`
    /// (qiniu-protocol.md §3.1: "host[:port] of callbackUrl"); user info dropped. Empty when the
    /// text has no `://`.
    static func authority(of url: String) -> String {
        guard let schemeEnd = url.utf8.firstRange(of: "://".utf8) else { return "" }
        let rest = url[schemeEnd.upperBound...]
        let end = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[authority.utf8.index(after: at)...]
        }
        return String(authority)
    }

    /// `scheme://host[:port]/path` — query, fragment and user info removed, because a callback
    /// URL may carry a token in its query and the text goes into logs, the outbox and the 579
    /// body the uploader sees.
    static func redacted(_ url: String) -> String {
        var text = Substring(url)
        if let cut = text.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            text = text[..<cut]
        }
        guard let schemeEnd = text.utf8.firstRange(of: "://".utf8) else { return String(text.prefix(200)) }
        let scheme = text[..<schemeEnd.upperBound]
        let rest = text[schemeEnd.upperBound...]
        let end = rest.utf8.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let path = rest[end...]
        return String((scheme + authority(of: url) + path).prefix(200))
    }
}
