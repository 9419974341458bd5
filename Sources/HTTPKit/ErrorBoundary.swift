import Basics

/// The middleware that turns what a handler throws into the one response a client sees, and
/// logs what the client must not see.
///
/// An ``HTTPResponseError`` (every layer's error table: `BizError`, `UpError`, ``HTTPError``)
/// is answered as itself. Anything else is unexpected: it is logged at error level with its
/// details (`handler failed`, with `reqid`, `route` and `error`) and answered by the boundary's
/// mapping, by default `500 {"error":"internal error"}`. A server that documents another answer
/// for unexpected failures installs its own boundary:
///
/// ```swift
/// router.use(ErrorBoundary(status: 599, message: "server operation failed"))
/// ```
///
/// Appended to a router, it sits inside the standard one and answers first.
public struct ErrorBoundary: Middleware {
    /// Builds the response for an unexpected error (already logged).
    public typealias Mapping = @Sendable (_ error: any Error, _ context: RequestContext) -> Response

    private let unexpected: Mapping

    /// The standard boundary: unexpected errors are `500 {"error":"internal error"}`.
    public init() { self.init(status: 500, message: "internal error") }

    /// A boundary answering every unexpected error with `status` and `{"error": message}`.
    public init(status: Int, message: String) {
        let response = Response.error(status: status, message: message)
        unexpected = { _, _ in response }
    }

    /// A boundary answering unexpected errors with `unexpected`'s response.
    public init(unexpected: @escaping Mapping) { self.unexpected = unexpected }

    /// Answers every error: its own response, or (logged) the mapping's.
    public func recover(_ error: any Error, request: Request, context: RequestContext) -> Response? {
        if let known = error as? any HTTPResponseError { return .rendering(known) }
        context.logger.error("handler failed", [
            "reqid": .string(context.requestID), "route": .string(context.route),
            "error": .string(String(describing: error)),
        ])
        return unexpected(error, context)
    }
}
