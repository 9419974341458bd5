public import Basics

/// A piece of request handling wrapped around every route: request ids, the access log, the
/// error boundary, metrics. Pieces compose in a ``MiddlewareStack``.
///
/// As in Hummingbird, middleware is added to the router in order, the first added being the
/// outermost. Unlike Hummingbird's `handle(_:context:next:)`, a piece is a set of synchronous
/// hooks rather than an async wrapper around `next`: synchronous routes answer on the server's
/// worker thread with no task (``SyncHTTPHandler``), and an async `next` would force every
/// request into one. Each hook has a default that does nothing.
///
/// Hooks run for every request the router sees, answered by a handler or not (404, 405, 413,
/// a timeout); ``recover(_:request:context:)`` only when a handler throws.
public protocol Middleware: Sendable {
    /// A request arrived and is about to be routed; outermost piece first. May change it (its id).
    func prepare(_ request: inout Request)

    /// A handler threw `error` (never a client disconnect or a timeout, which HTTPKit answers
    /// itself); innermost piece first. Returns the answer, or nil to leave it to the next piece out.
    func recover(_ error: any Error, request: Request, context: RequestContext) -> Response?

    /// `response` is about to be sent for `request`; innermost piece first. May add headers.
    func finish(_ response: inout Response, for request: Request)

    /// The response was handed to the connection (or dropped: the client had gone); innermost
    /// piece first. For logs and metrics; must be fast.
    func report(_ event: ResponseEvent, logger: Logger)
}

extension Middleware {
    /// Leaves the request as it is.
    public func prepare(_ request: inout Request) {}
    /// Leaves the error to the next piece.
    public func recover(_ error: any Error, request: Request, context: RequestContext) -> Response? { nil }
    /// Leaves the response as it is.
    public func finish(_ response: inout Response, for request: Request) {}
    /// Reports nothing.
    public func report(_ event: ResponseEvent, logger: Logger) {}
}
