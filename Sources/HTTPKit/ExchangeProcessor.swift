import Basics
import Synchronization
internal import NativeHTTP

/// Turns each libmicrohttpd exchange into a routed handler call and back into one response.
///
/// Runs on an MHD worker thread until the route is known: answers that need no handler (404,
/// 405, 413 by `Content-Length`) are given synchronously, so MHD can reply before reading a body.
/// A synchronous route's body is collected on that thread and its handler runs there too, so its
/// response is queued without suspending the connection. Everything else runs in a task, racing
/// a deadline: a suspended connection has no timeout of its own (microhttpd.h,
/// MHD_suspend_connection), so this is the only one it gets.
final class ExchangeProcessor: Sendable {
    let router: Router
    let logger: Logger
    let observer: HTTPServer.Observer?
    let handlerTimeout: Duration
    let clientAddress: (@Sendable (String, HTTPHeaders) -> String)?

    init(
        router: Router, logger: Logger, observer: HTTPServer.Observer?, handlerTimeout: Duration,
        clientAddress: (@Sendable (String, HTTPHeaders) -> String)? = nil
    ) {
        self.router = router
        self.logger = logger
        self.observer = observer
        self.handlerTimeout = handlerTimeout
        self.clientAddress = clientAddress
    }

    func accept(_ exchange: HTTPExchange) {
        let raw = exchange.request
        let headers = HTTPHeaders(raw.headers)
        var request = Request(
            method: HTTPMethod(rawValue: raw.method),
            target: raw.target,
            headers: headers,
            remoteAddress: clientAddress?(raw.remoteAddress, headers) ?? raw.remoteAddress,
            requestID: RequestID.forRequest(headers)
        )
        let reply = Reply(exchange: exchange, request: request, processor: self)
        if !Self.framingIsSupported(headers) {
            // RFC 9112 §6.1: with a transfer coding other than a final `chunked` the body length
            // cannot be determined; answer 400 before reading it (MHD then closes). libmicrohttpd
            // would otherwise read until the client closes, holding the request open until the
            // handler timeout even after the client half-closes.
            reply.send(.rendering(HTTPError.badRequest("unsupported Transfer-Encoding")), route: "unmatched")
            return
        }
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            reply.send(.rendering(HTTPError.notFound), route: "unmatched")
        case .methodNotAllowed(let allowed):
            reply.send(Router.methodNotAllowed(allowed), route: "unmatched")
        case .matched(let route, let parameters):
            request.parameters = parameters
            let limit = route.body.maxBytes
            if let announced = headers["Content-Length"].flatMap({ Int($0) }), announced > limit {
                // Refuse before reading a byte; MHD closes the connection after this reply.
                reply.send(.rendering(HTTPError.payloadTooLarge(limit: limit)), route: route.pattern.description)
                return
            }
            if let handler = route.syncHandler {
                runInline(route, handler, request: request, exchange: exchange, reply: reply)
            } else {
                Task { await self.run(route, request: request, exchange: exchange, reply: reply) }
            }
        }
    }

    /// True unless a `Transfer-Encoding` other than exactly `chunked` is present.
    static func framingIsSupported(_ headers: HTTPHeaders) -> Bool {
        let codings = headers.values(for: "Transfer-Encoding")
            .flatMap { $0.split(separator: ",") }
            .map { String($0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased() }
        return codings.isEmpty || codings == ["chunked"]
    }

    /// A synchronous route: body, handler and response all on this MHD worker thread.
    private func runInline(
        _ route: Route, _ handler: @escaping SyncHTTPHandler, request: Request, exchange: HTTPExchange, reply: Reply
    ) {
        let routeName = route.pattern.description
        let limit = route.body.maxBytes
        let logger = self.logger
        exchange.collectInline(limit: limit) { outcome in
            switch outcome {
            case .complete(let body):
                var request = request
                request.body = body
                request.bodyStream = RequestBodyStream(bytes: body)
                let context = RequestContext(requestID: request.requestID, logger: logger, route: routeName)
                let response: Response
                do {
                    response = try RequestContext.$current.withValue(context) { try handler(request, context) }
                } catch {
                    response = Router.render(error, logger: logger, requestID: request.requestID)
                }
                reply.send(response, route: routeName, fields: context.logFields)
            case .tooLarge:
                reply.send(.rendering(HTTPError.payloadTooLarge(limit: limit)), route: routeName)
            case .connectionClosed:
                // The client went away mid-body, as in the task path: log the request anyway.
                reply.send(.error(status: 400, message: "request body incomplete"), route: routeName)
                logger.info("request body incomplete", [
                    "reqid": .string(request.requestID), "reason": .string("\(HTTPExchangeError.connectionClosed)"),
                ])
            }
        }
    }

    private func run(_ route: Route, request: Request, exchange: HTTPExchange, reply: Reply) async {
        let routeName = route.pattern.description
        let context = RequestContext(requestID: request.requestID, logger: logger, route: routeName)
        let pieces = exchange.body
        let work = Task { () async throws -> Response in
            var request = request
            switch route.body {
            case .collect(let limit):
                request.body = try await RequestBodyStream(pieces: pieces, limit: limit).collect(upTo: limit)
                request.bodyStream = RequestBodyStream(bytes: request.body)
            case .stream(let limit):
                request.bodyStream = RequestBodyStream(pieces: pieces, limit: limit)
            }
            return try await RequestContext.$current.withValue(context) { try await route.handler(request, context) }
        }
        let timeout = route.timeout ?? handlerTimeout
        let timer = Task {
            try await Task.sleep(for: timeout)
            work.cancel()
            if reply.send(.rendering(HTTPError.timedOut), route: routeName, fields: context.logFields) {
                self.logger.warning("handler timed out", ["reqid": .string(request.requestID), "route": .string(routeName)])
            }
        }
        let result = await work.result
        timer.cancel()
        switch result {
        case .success(let response):
            reply.send(response, route: routeName, fields: context.logFields)
        case .failure(let error as HTTPExchangeError):
            // The client went away mid-body; nobody will read an answer, but log the request.
            reply.send(.error(status: 400, message: "request body incomplete"), route: routeName, fields: context.logFields)
            logger.info("request body incomplete", ["reqid": .string(request.requestID), "reason": .string("\(error)")])
        case .failure(let error) where error is CancellationError && work.isCancelled:
            // The handler timed out: the timer has answered 503 and logged it (warning); the
            // cancellation the handler then ends with is no failure of its own to log again.
            break
        case .failure(let error):
            reply.send(
                Router.render(error, logger: logger, requestID: request.requestID), route: routeName,
                fields: context.logFields)
        }
    }

    /// Adds the headers every response carries and converts to MHD's form.
    func finalize(_ response: Response, requestID: String) -> RawResponse {
        var headers = response.headers
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        headers.set(name: RequestID.headerName, value: requestID)
        headers.remove(name: "Content-Length")  // MHD computes it from the body
        let body: RawResponse.Body
        switch response.body {
        case .bytes(let bytes): body = .bytes(bytes)
        case .file(let descriptor, let offset, let length): body = .file(descriptor: descriptor, offset: offset, length: length)
        }
        // Qiniu uses codes above 599 (579, 612, 614, 631, 701; qiniu-protocol.md §8): pass any 3-digit status.
        let status = (100...999).contains(response.status) ? response.status : 500
        return RawResponse(status: status, headers: headers.fields, body: body)
    }
}
