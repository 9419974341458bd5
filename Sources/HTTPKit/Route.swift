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

/// A handler that answers through a ``Responder``, at once or later from any thread, with no
/// task: it starts on the server's worker thread as a ``SyncHTTPHandler`` does (the same
/// contract: it must not block), and may hand the responder to a callback, e.g. the completion
/// of a statement batched with other requests'. The route's deadline answers 503 if nothing
/// has by then. What it throws is answered as a handler's error.
public typealias DeferredHTTPHandler = @Sendable (Request, RequestContext, Responder) throws -> Void

/// Gives a ``DeferredHTTPHandler``'s request its one answer. Only the first answer counts.
public struct Responder: Sendable {
    private let deliver: @Sendable (Result<Response, any Error>) -> Void

    init(_ deliver: @escaping @Sendable (Result<Response, any Error>) -> Void) { self.deliver = deliver }

    /// Answers with the response `make` returns, or with the error it throws (turned into a
    /// response by the middleware, as a handler's error is).
    public func answer(_ make: () throws -> Response) {
        let result: Result<Response, any Error>
        do { result = .success(try make()) } catch { result = .failure(error) }
        deliver(result)
    }
}

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
    /// Set for routes registered with ``Router/addDeferred(_:_:maxBodyBytes:timeout:handler:)``.
    public internal(set) var deferredHandler: DeferredHTTPHandler? = nil
}
