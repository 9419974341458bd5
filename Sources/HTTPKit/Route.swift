/// A request handler.
public typealias HTTPHandler = @Sendable (Request, RequestContext) async throws -> Response

/// One registered route.
public struct Route: Sendable {
    /// The method it answers.
    public let method: HTTPMethod
    /// The path pattern.
    public let pattern: RoutePattern
    /// How the body is received.
    public let body: RequestBodyMode
    /// Overrides the server's handler timeout when set (e.g. long uploads).
    public let timeout: Duration?
    /// The handler.
    public let handler: HTTPHandler
}
