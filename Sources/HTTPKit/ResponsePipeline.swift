import Basics
internal import NativeHTTP

/// The way out every response takes, whoever gives it (a handler, the deadline, an early
/// refusal): the middleware's ``Middleware/finish(_:for:)`` hooks, then HTTPKit's own rules and
/// libmicrohttpd's form; after sending, the ``Middleware/report(_:logger:)`` hooks.
struct ResponsePipeline: Sendable {
    let middleware: MiddlewareStack
    let logger: Logger

    /// `response` as it goes on the wire for `request`.
    func raw(_ response: consuming Response, for request: Request) -> RawResponse {
        middleware.finish(&response, for: request)
        return Self.raw(response)
    }

    /// The default `Content-Type` (JSON), no `Content-Length` (MHD computes it from the body),
    /// and a status MHD can send.
    static func raw(_ response: consuming Response) -> RawResponse {
        // Edited in place: a copy of `response.headers` would share its storage and copy it on
        // the first change.
        if !response.headers.contains("Content-Type") {
            response.headers.add(name: "Content-Type", value: "application/json")
        }
        if response.headers.contains("Content-Length") { response.headers.remove(name: "Content-Length") }
        let body: RawResponse.Body
        switch response.body {
        case .bytes(let bytes): body = .bytes(bytes)
        case .file(let descriptor, let offset, let length): body = .file(descriptor: descriptor, offset: offset, length: length)
        case .stream(let length, let source):
            body = .stream(length: length, source: RawBodySource(next: { try await source.next() }, cancel: { source.cancel() }))
        }
        // Qiniu uses codes above 599 (579, 612, 614, 631, 701; qiniu-protocol.md §8): pass any 3-digit status.
        let status = (100...999).contains(response.status) ? response.status : 500
        return RawResponse(status: status, headers: response.headers.fields, body: body)
    }

    /// Runs the report hooks for one response.
    func report(_ event: ResponseEvent) { middleware.report(event, logger: logger) }
}
