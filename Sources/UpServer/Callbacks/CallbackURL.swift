/// Pieces of a `callbackUrl` the deliverer needs besides the request-target (which
/// `RequestTarget.of(url:)` gives): the `Host` to send and sign, and a loggable form.
enum CallbackURL {
    /// `host[:port]` of an absolute URL, as an HTTP client puts it into `Host`
    /// (qiniu-protocol.md §3.1: "host[:port] of callbackUrl"); user info dropped. Empty when the
    /// text has no `://`.
    static func authority(of url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return "" }
        let rest = url[schemeEnd.upperBound...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return String(authority)
    }

    /// `scheme://host[:port]/path` — query, fragment and user info removed, because a callback
    /// URL may carry a token in its query and the text goes into logs, the outbox and the 579
    /// body the uploader sees.
    static func redacted(_ url: String) -> String {
        var text = Substring(url)
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<cut] }
        guard let schemeEnd = text.firstRange(of: "://") else { return String(text.prefix(200)) }
        let scheme = text[..<schemeEnd.upperBound]
        let rest = text[schemeEnd.upperBound...]
        let end = rest.firstIndex(of: "/") ?? rest.endIndex
        let path = rest[end...]
        return String((scheme + authority(of: url) + path).prefix(200))
    }
}
