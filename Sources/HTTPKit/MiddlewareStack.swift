import Basics

/// The ordered middleware of a router, outermost first, and the one place its hooks are run in
/// their order (``Middleware``). Requests answered by the server itself and in-process ones
/// (``Router/respond(to:logger:)``) go through the same stack.
public struct MiddlewareStack: Sendable {
    /// The pieces, outermost first.
    public private(set) var pieces: [any Middleware]

    /// A stack of `pieces`, outermost first.
    public init(_ pieces: [any Middleware]) { self.pieces = pieces }

    /// What every router starts with: request ids (``RequestIDMiddleware``), the access log
    /// (``AccessLogMiddleware``) and the standard ``ErrorBoundary`` (500 `internal error`).
    public static var standard: MiddlewareStack {
        MiddlewareStack([RequestIDMiddleware(), AccessLogMiddleware(), ErrorBoundary()])
    }

    /// Adds `piece` inside every piece already there: it sees requests after them and errors
    /// and responses before them (a server's own ``ErrorBoundary`` answers before the standard one).
    public mutating func append(_ piece: any Middleware) { pieces.append(piece) }

    func prepare(_ request: inout Request) {
        for piece in pieces { piece.prepare(&request) }
    }

    /// The answer to `error`: the innermost piece that gives one, else ``ErrorBoundary``'s.
    func recover(_ error: any Error, request: Request, context: RequestContext) -> Response {
        for piece in pieces.reversed() {
            if let response = piece.recover(error, request: request, context: context) { return response }
        }
        return ErrorBoundary().recover(error, request: request, context: context)!
    }

    func finish(_ response: inout Response, for request: Request) {
        for piece in pieces.reversed() { piece.finish(&response, for: request) }
    }

    func report(_ event: ResponseEvent, logger: Logger) {
        for piece in pieces.reversed() { piece.report(event, logger: logger) }
    }
}
