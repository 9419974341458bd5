public import Basics

/// What a handler receives besides the request.
public struct RequestContext: Sendable {
    /// The request id (also in `X-Reqid`).
    public var requestID: String
    /// The server's logger; include `reqid` in fields you log.
    public var logger: Logger
    /// The matched route pattern, e.g. `"/v1/uploads/:id"`.
    public var route: String

    /// Creates a context (the server does this; tests may too).
    public init(requestID: String, logger: Logger, route: String) {
        self.requestID = requestID
        self.logger = logger
        self.route = route
    }
}
