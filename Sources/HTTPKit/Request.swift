/// An HTTP request as handlers see it.
///
/// `target`, `path` and `query` are exactly the bytes the client sent (still percent-encoded):
/// signatures such as QBox's are computed over them. `queryItems` and `parameters` are decoded.
public struct Request: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// The request target as received, `path?query`, e.g. `"/cb?x=%2F&y"`.
    public var target: String
    /// The path part of `target`, still percent-encoded.
    public var path: String
    /// The query part of `target` without the `?`, still encoded; `""` if absent.
    public var query: String
    /// The query split at `&` and `=`, percent-decoded (`+` as space), in order. A name without
    /// `=` has value `""`.
    public var queryItems: [(name: String, value: String)]
    /// Header fields in arrival order.
    public var headers: HTTPHeaders
    /// The client's IP address: the socket's peer, or what `HTTPServer.Configuration.clientAddress`
    /// made of it (behind trusted proxies); `""` in-process.
    public var remoteAddress: String
    /// The request id echoed in `X-Reqid`.
    public var requestID: String
    /// Path parameters by name (`:id` → `"id"`, percent-decoded); a trailing `*` is stored under
    /// `"*"`, raw (still encoded), because callers split it themselves.
    public var parameters: [String: String]
    /// The whole body for routes in collected mode; `[]` for streamed routes.
    public var body: [UInt8]
    /// The body as pieces: for streamed routes it reads from the socket as the handler iterates;
    /// for collected routes it yields `body` once.
    public var bodyStream: RequestBodyStream

    /// Creates a request, e.g. for calling a router in-process.
    public init(
        method: HTTPMethod,
        target: String,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        remoteAddress: String = "",
        requestID: String = RequestID.generate(),
        parameters: [String: String] = [:]
    ) {
        self.method = method
        self.target = target
        let (path, query) = Self.split(target)
        self.path = path
        self.query = query
        self.queryItems = Self.parseQuery(query)
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.requestID = requestID
        self.parameters = parameters
        self.body = body
        self.bodyStream = RequestBodyStream(bytes: body)
    }

    /// The first decoded value of query item `name`, or `nil`.
    public func queryItem(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Splits a target into raw path and raw query (without `?`); a fragment never reaches a
    /// server, but is cut off if present.
    /// Delimiters are found by byte, as HTTP defines them: a Character search misses a `?` or
    /// `#` joined in one Character with a combining mark after it (or a prepend character
    /// before it).
    static func split(_ target: String) -> (path: String, query: String) {
        var text = Substring(target)
        if let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { text = text[..<hash] }
        guard let mark = text.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (String(text), "") }
        return (String(text[..<mark]), String(text[text.utf8.index(after: mark)...]))
    }

    static func parseQuery(_ query: String) -> [(name: String, value: String)] {
        guard !query.isEmpty else { return [] }
        // By byte, like `split`.
        return query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { bytes in
            let item = Substring(bytes)
            if let equals = item.utf8.firstIndex(of: UInt8(ascii: "=")) {
                return (
                    PercentDecoding.decode(item[..<equals], plusAsSpace: true),
                    PercentDecoding.decode(item[item.utf8.index(after: equals)...], plusAsSpace: true)
                )
            }
            return (PercentDecoding.decode(item, plusAsSpace: true), "")
        }
    }
}
