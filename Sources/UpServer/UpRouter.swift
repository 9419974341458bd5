import HTTPKit

/// Registers up-server's routes with the error boundary applied to every one (`UpErrorBoundary`):
/// controllers register here, never on a bare `Router`, so no route can escape it. (When HTTPKit
/// offers middleware, the boundary becomes one, applied here.)
struct UpRouter {
    /// The routes as registered, each inside the boundary.
    private(set) var router = Router()

    /// Registers `handler` for `method` and `pattern` inside the boundary.
    mutating func add(
        _ method: HTTPMethod, _ pattern: String, body: RequestBodyMode = .collect(), timeout: Duration? = nil,
        handler: @escaping HTTPHandler
    ) {
        router.add(method, pattern, body: body, timeout: timeout, handler: UpErrorBoundary.wrap(handler))
    }

    /// A `GET` route.
    mutating func get(_ pattern: String, handler: @escaping HTTPHandler) { add(.get, pattern, handler: handler) }

    /// A `POST` route.
    mutating func post(
        _ pattern: String, body: RequestBodyMode = .collect(), timeout: Duration? = nil, handler: @escaping HTTPHandler
    ) {
        add(.post, pattern, body: body, timeout: timeout, handler: handler)
    }

    /// A `PUT` route.
    mutating func put(
        _ pattern: String, body: RequestBodyMode = .collect(), timeout: Duration? = nil, handler: @escaping HTTPHandler
    ) {
        add(.put, pattern, body: body, timeout: timeout, handler: handler)
    }

    /// A `DELETE` route.
    mutating func delete(_ pattern: String, handler: @escaping HTTPHandler) { add(.delete, pattern, handler: handler) }
}
