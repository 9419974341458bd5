public import Basics
import Synchronization

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

    /// Routes whose pattern has no parameter, by path then method (the first registered of
    /// each): such a route is the most specific match its path can have, so ``match(method:path:)``
    /// finds it without scanning every route (the token route is matched on every request).
    private var literalRoutes: [String: [HTTPMethod: Int]] = [:]

    /// The middleware every request of this router goes through, outermost first; starts as
    /// ``MiddlewareStack/standard`` (request id, access log, standard error boundary).
    public var middleware = MiddlewareStack.standard

    /// An empty router.
    public init() {}

    /// Adds `piece` inside the router's middleware (see ``MiddlewareStack/append(_:)``), e.g. a
    /// server's own ``ErrorBoundary``.
    public mutating func use(_ piece: any Middleware) { middleware.append(piece) }

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
        append(Route(
            method: method, pattern: parsed, body: body, timeout: timeout, handler: handler, syncHandler: nil))
    }

    /// Registers a synchronous `handler` (see ``SyncHTTPHandler`` for its contract: it must not
    /// block) for `method` and `pattern`. The body is collected (at most `maxBodyBytes`, else 413)
    /// before it runs. Errors, 404/405, `X-Reqid`, the access log and the observer work as for
    /// any route.
    public mutating func addSync(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int = 1 << 20, handler: @escaping SyncHTTPHandler
    ) {
        guard let parsed = RoutePattern(pattern) else { preconditionFailure("invalid route pattern \(pattern)") }
        append(Route(
            method: method, pattern: parsed, body: .collect(maxBytes: maxBodyBytes), timeout: nil,
            handler: { request, context in try handler(request, context) }, syncHandler: handler))
    }

    /// Registers a `handler` that answers through a ``Responder`` (see ``DeferredHTTPHandler``:
    /// it starts on the worker thread and must not block) for `method` and `pattern`. The body is
    /// collected on that thread (at most `maxBodyBytes`, which may not exceed 64 KiB; more is 413)
    /// before it runs; `timeout` (default: the server's handler timeout) bounds the answer.
    public mutating func addDeferred(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int = 16 << 10, timeout: Duration? = nil,
        handler: @escaping DeferredHTTPHandler
    ) {
        guard let parsed = RoutePattern(pattern) else { preconditionFailure("invalid route pattern \(pattern)") }
        precondition(maxBodyBytes <= ExchangeProcessor.collectOnWorkerLimit, "a deferred route's body is collected inline")
        var route = Route(
            method: method, pattern: parsed, body: .collect(maxBytes: maxBodyBytes), timeout: timeout,
            handler: { request, context in try await Self.answer(request, context, handler) }, syncHandler: nil)
        route.deferredHandler = handler
        append(route)
    }

    /// A deferred handler's answer, awaited: how it runs in-process (``respond(to:logger:)``).
    private static func answer(
        _ request: Request, _ context: RequestContext, _ handler: @escaping DeferredHTTPHandler
    ) async throws -> Response {
        let answered = Mutex(false)
        return try await withCheckedThrowingContinuation { continuation in
            let responder = Responder { result in
                guard answered.withLock({ done in defer { done = true }; return !done }) else { return }
                continuation.resume(with: result)
            }
            do { try handler(request, context, responder) } catch { responder.answer { throw error } }
        }
    }

    private mutating func append(_ route: Route) {
        if let path = route.pattern.literalPath, literalRoutes[path]?[route.method] == nil {
            literalRoutes[path, default: [:]][route.method] = routes.count
        }
        routes.append(route)
    }

    /// Registers a synchronous `GET` route (see ``addSync(_:_:maxBodyBytes:handler:)``).
    public mutating func getSync(_ pattern: String, handler: @escaping SyncHTTPHandler) {
        addSync(.get, pattern, handler: handler)
    }

    /// Registers a synchronous `POST` route (see ``addSync(_:_:maxBodyBytes:handler:)``).
    public mutating func postSync(
        _ pattern: String, maxBodyBytes: Int = 1 << 20, handler: @escaping SyncHTTPHandler
    ) {
        addSync(.post, pattern, maxBodyBytes: maxBodyBytes, handler: handler)
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
        if !path.isEmpty, let index = literalRoutes[path]?[method] { return .matched(routes[index], parameters: [:]) }
        let wanted: [HTTPMethod] = method == .head ? [.head, .get] : [method]
        let parts = RoutePattern.segments(of: path)
        for candidate in wanted {
            for route in routes {
                guard let parameters = route.pattern.match(path, parts: parts) else { continue }
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

    /// Routes `request` and runs its handler in-process (no sockets) through the same middleware
    /// as the server: 404/405 as JSON, the collected-body limit enforced, thrown errors answered
    /// by the error boundary, `X-Reqid` added and the access-log line written. The response lacks
    /// only the default `Content-Type`, which the server adds.
    public func respond(to request: Request, logger: Logger) async -> Response {
        let started = ContinuousClock.now
        var request = request
        middleware.prepare(&request)
        var fields: AccessLogFields?
        var route = "unmatched"
        var response: Response
        switch match(method: request.method, path: request.path) {
        case .notFound:
            response = .rendering(HTTPError.notFound)
        case .methodNotAllowed(let allowed):
            response = Self.methodNotAllowed(allowed)
        case .matched(let matched, let parameters):
            request.parameters = parameters
            route = matched.pattern.description
            let context = RequestContext(requestID: request.requestID, logger: logger, route: route)
            fields = context.logFields
            do {
                if request.body.count > matched.body.maxBytes {
                    throw HTTPError.payloadTooLarge(limit: matched.body.maxBytes)
                }
                response = try await RequestContext.$current.withValue(context) {
                    try await matched.handler(request, context)
                }
            } catch {
                response = middleware.recover(error, request: request, context: context)
            }
        }
        middleware.finish(&response, for: request)
        middleware.report(ResponseEvent(
            method: request.method, route: route, status: response.status,
            duration: (ContinuousClock.now - started).seconds, bytes: response.body.count, path: request.path,
            requestID: request.requestID, remoteAddress: request.remoteAddress, fields: fields?.all ?? []), logger: logger)
        return response
    }

    static func methodNotAllowed(_ allowed: [HTTPMethod]) -> Response {
        let names = allowed.map(\.rawValue).joined(separator: ", ")
        return .error(status: 405, message: "method not allowed", headers: ["Allow": names])
    }

    private static func isMoreSpecific(_ a: RoutePattern, than b: RoutePattern) -> Bool {
        let x = a.specificity, y = b.specificity
        if x.literals != y.literals { return x.literals > y.literals }
        if x.parameters != y.parameters { return x.parameters > y.parameters }
        return !x.wildcard && y.wildcard
    }
}
