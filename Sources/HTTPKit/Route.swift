/// A request handler; runs as a Swift task and may suspend (await I/O).
public typealias HTTPHandler = @Sendable (Request, RequestContext) async throws -> Response

/// A synchronous request handler: runs inline on the server's worker thread as soon as the
/// (collected) body is complete, and its response is queued when it returns, with no task and
/// no thread switch.
///
/// Contract: it must not block. No I/O waits, no locks held for long, no sleeping: the thread
/// also serves other connections, and there is no handler timeout to rescue a stuck one. Pure
/// computation on in-memory state (signing, counters, rendering) is what it is for.
public typealias SyncHTTPHandler = @Sendable (Request, RequestContext) throws -> Response

/// One registered route.
public struct Route: Sendable {
    /// The method it answers.
    public let method: HTTPMethod
    /// The path pattern.
    public let pattern: RoutePattern
    /// How the body is received (always `.collect` for a synchronous handler).
    public let body: RequestBodyMode
    /// Overrides the server's handler timeout when set (e.g. long uploads); unused by
    /// synchronous handlers, which have none.
    public let timeout: Duration?
    /// The handler; for a synchronous route, a wrapper around ``syncHandler``.
    public let handler: HTTPHandler
    /// Set for routes registered with ``Router/addSync(_:_:maxBodyBytes:handler:)``.
    public let syncHandler: SyncHTTPHandler?
}
