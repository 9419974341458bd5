/// Gives every request its id and every response the `X-Reqid` header (``RequestID``): the
/// client's own id when it sent an acceptable one, else a generated one. Outermost in
/// ``MiddlewareStack/standard``, so every other piece sees the id.
public struct RequestIDMiddleware: Middleware {
    /// Creates the middleware.
    public init() {}

    /// Sets the id unless the request already has one (in-process requests are created with one).
    public func prepare(_ request: inout Request) {
        if request.requestID.isEmpty { request.requestID = RequestID.forRequest(request.headers) }
    }

    /// Adds `X-Reqid`.
    public func finish(_ response: inout Response, for request: Request) {
        response.headers.set(name: RequestID.headerName, value: request.requestID)
    }
}
