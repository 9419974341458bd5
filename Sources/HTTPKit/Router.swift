public import Basics

/// Maps method + path to a handler. Built once at startup, then shared read-only.
///
/// Matching: among routes whose pattern matches the raw path, the most specific wins (more
/// literal segments, then more parameters, then no wildcard; ties go to the first registered).
/// A path that matches only with other methods is 405 with `Allow`; `HEAD` falls back to `GET`.
public struct Router: Sendable {
    /// The result of matching a request.
    public enum Match: Sendable {
        /// A route and its captured parameters.
        case matched(Route, parameters: [String: String])
        /// No route has this path.
        case notFound
        /// The path exists, but not for this method; `allowed` lists the methods that are.
        case methodNotAllowed(allowed: [HTTPMethod])
    }

    /// The routes in registration order.
    public private(set) var routes: [Route] = []

    /// An empty router.
    public init() {}

    /// Registers `handler` for `method` and `pattern` (`precondition` on a malformed pattern:
    /// routes are code, not input).
    public mutating func add(
        _ method: HTTPMethod,
        _ pattern: String,
        body: RequestBodyMode = .collect(),
        timeout: Duration? = nil,
        handler: @escaping HTTPHandler
    ) {
        guard let parsed = RoutePattern(pattern) else { preconditionFailure("invalid route pattern \(pattern)") }
        routes.append(Route(method: method, pattern: parsed, body: body, timeout: timeout, handler: handler))
    }

    /// Registers a `GET` route.
    public mutating func get(_ pattern: String, timeout: Duration? = nil, handler: @escaping HTTPHandler) {
        add(.get, pattern, timeout: timeout, handler: handler)
    }

    /// Registers a `POST` route.
    public mutating func post(
        _ pattern: String, body: RequestBodyMode = .collect(), timeout: Duration? = nil,
        handler: @escaping HTTPHandler
    ) {
        add(.post, pattern, body: body, timeout: timeout, handler: handler)
    }

    /// Registers a `PUT` route.
    public mutating func put(
        _ pattern: String, body: RequestBodyMode = .collect(), timeout: Duration? = nil,
        handler: @escaping HTTPHandler
    ) {
        add(.put, pattern, body: body, timeout: timeout, handler: handler)
    }

    /// Registers a `DELETE` route.
    public mutating func delete(_ pattern: String, timeout: Duration? = nil, handler: @escaping HTTPHandler) {
        add(.delete, pattern, timeout: timeout, handler: handler)
    }

    /// Finds the route for `method` and raw `path` (no query).
    public func match(method: HTTPMethod, path: String) -> Match {
        var best: (route: Route, parameters: [String: String])?
        var allowed: [HTTPMethod] = []
        let wanted: [HTTPMethod] = method == .head ? [.head, .get] : [method]
        for candidate in wanted {
            for route in routes {
                guard let parameters = route.pattern.match(path) else { continue }
                if route.method == candidate {
                    if best == nil || Self.isMoreSpecific(route.pattern, than: best!.route.pattern) {
                        best = (route, parameters)
                    }
                } else if !allowed.contains(route.method) {
                    allowed.append(route.method)
                }
            }
            if let best { return .matched(best.route, parameters: best.parameters) }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    /// Routes `request` and runs its handler in-process (no sockets): 404/405 as JSON, the
    /// collected-body limit enforced, thrown errors rendered as the server would. The response
    /// lacks only `X-Reqid` and the default `Content-Type`, which the server adds.
    public func respond(to request: Request, logger: Logger) async -> Response {
        switch match(method: request.method, path: request.path) {
        case .notFound:
            return .rendering(HTTPError.notFound)
        case .methodNotAllowed(let allowed):
            return Self.methodNotAllowed(allowed)
        case .matched(let route, let parameters):
            var request = request
            request.parameters = parameters
            let context = RequestContext(requestID: request.requestID, logger: logger, route: route.pattern.description)
            do {
                if request.body.count > route.body.maxBytes { throw HTTPError.payloadTooLarge(limit: route.body.maxBytes) }
                return try await route.handler(request, context)
            } catch {
                return Self.render(error, logger: logger, requestID: request.requestID)
            }
        }
    }

    static func methodNotAllowed(_ allowed: [HTTPMethod]) -> Response {
        let names = allowed.map(\.rawValue).joined(separator: ", ")
        return .error(status: 405, message: "method not allowed", headers: ["Allow": names])
    }

    /// The one place a thrown error becomes a response; unknown errors are logged, not shown.
    static func render(_ error: any Error, logger: Logger, requestID: String) -> Response {
        if !(error is any HTTPResponseError) {
            logger.error("handler failed", ["reqid": .string(requestID), "error": .string(String(describing: error))])
        }
        return .rendering(error)
    }

    private static func isMoreSpecific(_ a: RoutePattern, than b: RoutePattern) -> Bool {
        let x = a.specificity, y = b.specificity
        if x.literals != y.literals { return x.literals > y.literals }
        if x.parameters != y.parameters { return x.parameters > y.parameters }
        return !x.wildcard && y.wildcard
    }
}
