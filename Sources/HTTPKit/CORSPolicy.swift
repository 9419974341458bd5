/// Which web origins may call a server from a browser (the `cors` configuration block of both
/// servers: `"cors": {"allowedOrigins": ["http://127.0.0.1:8080"]}`), and the fixed parts of
/// every answer: the request headers a preflight allows, the response headers scripts may read.
///
/// An origin is `scheme://host[:port]` exactly as a browser sends it in `Origin` (no path, no
/// trailing slash, lower-case scheme and host); `"*"` allows every origin. An empty list (the
/// default) turns CORS off: no header is added and preflights stay 405, as before.
public struct CORSPolicy: Sendable, Equatable {
    /// The configured origins, as given.
    public let allowedOrigins: [String]

    /// Request headers a preflight allows (what the upload clients send).
    public static let allowedHeaders = ["Authorization", "Content-Type", "Content-MD5", "X-Reqid"]
    /// Response headers a script may read.
    public static let exposedHeaders = ["X-Reqid", "ETag"]
    /// How long a browser may cache a preflight answer, in seconds.
    public static let maxAgeSeconds = 600

    /// No origin allowed: CORS off.
    public static let off = CORSPolicy(allowedOrigins: [])

    /// A policy allowing `allowedOrigins`; check them first with ``problem(in:)`` (entries that
    /// are not origins simply never match).
    public init(allowedOrigins: [String]) { self.allowedOrigins = allowedOrigins }

    /// What is wrong with the first entry of `origins` that is neither `*` nor an origin, e.g.
    /// `[1] "http://a.example/" is not an origin: …`, or nil when all are fine.
    public static func problem(in origins: [String]) -> String? {
        guard let index = origins.firstIndex(where: { !isOrigin($0) }) else { return nil }
        return "[\(index)] \"\(origins[index])\" is not an origin: write scheme://host[:port] with no path "
            + "or trailing slash, lower case (e.g. \"http://127.0.0.1:8080\"), or \"*\""
    }

    /// Whether any origin is allowed (CORS on).
    public var isEnabled: Bool { !allowedOrigins.isEmpty }

    /// Whether a request whose `Origin` header is `origin` may read the answer.
    public func allows(_ origin: String) -> Bool {
        allowedOrigins.contains("*") || allowedOrigins.contains(origin)
    }

    /// `*`, or `http(s)://` + a host of letters, digits, `.`, `-` (or a bracketed IPv6 address)
    /// + an optional `:port`, all lower case: the serialisation browsers send.
    static func isOrigin(_ text: String) -> Bool {
        if text == "*" { return true }
        let rest: Substring
        if text.hasPrefix("http://") { rest = text.dropFirst(7) }
        else if text.hasPrefix("https://") { rest = text.dropFirst(8) }
        else { return false }
        var host = rest
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            let port = rest[rest.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCIIDigit), let value = Int(port), value > 0,
                value < 65_536
            else { return false }
            host = rest[..<colon]
        }
        if host.hasPrefix("[") && host.hasSuffix("]") {
            return host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" } && host.count > 2
        }
        return !host.isEmpty && host.allSatisfy { $0.isASCIIDigit || ("a"..."z").contains($0) || $0 == "." || $0 == "-" }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
