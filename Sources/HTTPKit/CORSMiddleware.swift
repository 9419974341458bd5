/// Lets web pages on the allowed origins (``CORSPolicy``) call the routes it covers: answers
/// their preflights and marks their answers readable. One piece, used by both servers (biz-server
/// covers `/v1/uptoken` and the admin API, up-server every upload route and downloads).
///
/// Hooks only, like every ``Middleware``: a preflight (`OPTIONS` with `Origin` and
/// `Access-Control-Request-Method`) is routed like any request, and a route path that exists
/// answers it 405 with `Allow`; ``finish(_:for:)`` turns that 405 into the preflight answer, its
/// `Access-Control-Allow-Methods` being exactly the route's `Allow`. So the allowed methods never
/// drift from the routes, and a path no route has stays 404.
///
/// On every covered response, when CORS is on: `Vary: Origin` (the answer depends on it, so a
/// cache must not give one origin's answer to another); for an allowed origin also
/// `Access-Control-Allow-Origin: <that origin>` and `Access-Control-Expose-Headers: X-Reqid, ETag`.
/// A preflight from an origin not allowed is 403 `{"error": "origin not allowed"}`.
public struct CORSMiddleware: Middleware {
    /// The origins allowed.
    public let policy: CORSPolicy
    private let covers: @Sendable (String) -> Bool

    /// A middleware applying `policy` to the requests whose path `covers` accepts.
    public init(_ policy: CORSPolicy, covers: @escaping @Sendable (_ path: String) -> Bool) {
        self.policy = policy
        self.covers = covers
    }

    /// A middleware applying `policy` to paths equal to one of `paths` or, for entries ending in
    /// `*` (`/buckets/*`), starting with what precedes it.
    public init(_ policy: CORSPolicy, paths: [String]) {
        self.init(policy) { path in
            paths.contains { $0.hasSuffix("*") ? path.hasPrefix($0.dropLast()) : path == $0 }
        }
    }

    /// Adds the CORS headers, or answers the preflight.
    public func finish(_ response: inout Response, for request: Request) {
        guard policy.isEnabled, covers(request.path) else { return }
        let origin = request.headers["Origin"]
        let isPreflight = request.method == .options && origin != nil
            && request.headers["Access-Control-Request-Method"] != nil && response.status == 405
        if isPreflight {
            response = Self.preflight(allowed: response.headers["Allow"] ?? "")
            if !policy.allows(origin!) { response = .error(status: 403, message: "origin not allowed") }
        }
        response.headers.add(name: "Vary", value: "Origin")
        guard let origin, policy.allows(origin) else { return }
        response.headers.set(name: "Access-Control-Allow-Origin", value: origin)
        if !isPreflight {
            response.headers.set(
                name: "Access-Control-Expose-Headers", value: CORSPolicy.exposedHeaders.joined(separator: ", "))
        }
    }

    /// 204 with the route's methods and the fixed request headers.
    private static func preflight(allowed methods: String) -> Response {
        Response(status: 204, headers: [
            "Access-Control-Allow-Methods": methods,
            "Access-Control-Allow-Headers": CORSPolicy.allowedHeaders.joined(separator: ", "),
            "Access-Control-Max-Age": String(CORSPolicy.maxAgeSeconds),
        ])
    }
}
