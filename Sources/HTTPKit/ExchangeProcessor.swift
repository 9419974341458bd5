import Basics
import Synchronization
internal import NativeHTTP

/// Turns each libmicrohttpd exchange into a routed handler call and back into one response.
///
/// Runs on an MHD worker thread until the route is known: answers that need no handler (404,
/// 405, 413 by `Content-Length`) are given synchronously, so MHD can reply before reading a body.
/// Everything else runs in a task, racing a deadline: a suspended connection has no timeout of
/// its own (microhttpd.h, MHD_suspend_connection), so this is the only one it gets.
final class ExchangeProcessor: Sendable {
    let router: Router
    let logger: Logger
    let observer: HTTPServer.Observer?
    let handlerTimeout: Duration

    init(router: Router, logger: Logger, observer: HTTPServer.Observer?, handlerTimeout: Duration) {
        self.router = router
        self.logger = logger
        self.observer = observer
        self.handlerTimeout = handlerTimeout
    }

    func accept(_ exchange: HTTPExchange) {
        let raw = exchange.request
        let headers = HTTPHeaders(raw.headers)
        var request = Request(
            method: HTTPMethod(rawValue: raw.method),
            target: raw.target,
            headers: headers,
            remoteAddress: raw.remoteAddress,
            requestID: RequestID.forRequest(headers)
        )
        let reply = Reply(exchange: exchange, request: request, processor: self)
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
            Task { await self.run(route, request: request, exchange: exchange, reply: reply) }
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
            return try await route.handler(request, context)
        }
        let timeout = route.timeout ?? handlerTimeout
        let timer = Task {
            try await Task.sleep(for: timeout)
            work.cancel()
            if reply.send(.rendering(HTTPError.timedOut), route: routeName) {
                self.logger.warning("handler timed out", ["reqid": .string(request.requestID), "route": .string(routeName)])
            }
        }
        let result = await work.result
        timer.cancel()
        switch result {
        case .success(let response):
            reply.send(response, route: routeName)
        case .failure(let error as HTTPExchangeError):
            // The client went away mid-body; nobody will read an answer, but log the request.
            reply.send(.error(status: 400, message: "request body incomplete"), route: routeName)
            logger.info("request body incomplete", ["reqid": .string(request.requestID), "reason": .string("\(error)")])
        case .failure(let error):
            reply.send(Router.render(error, logger: logger, requestID: request.requestID), route: routeName)
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

/// The single answer to one request: whoever sends first (handler, deadline, early refusal) wins,
/// and only the winner is logged and observed.
private final class Reply: Sendable {
    private let exchange: HTTPExchange
    private let processor: ExchangeProcessor
    private let method: HTTPMethod
    private let path: String
    private let requestID: String
    private let remoteAddress: String
    private let started = ContinuousClock.now
    private let sent = Mutex(false)

    init(exchange: HTTPExchange, request: Request, processor: ExchangeProcessor) {
        self.exchange = exchange
        self.processor = processor
        self.method = request.method
        self.path = request.path
        self.requestID = request.requestID
        self.remoteAddress = request.remoteAddress
    }

    @discardableResult
    func send(_ response: Response, route: String) -> Bool {
        let first = sent.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else {
            if case .file(let descriptor, _, _) = response.body {
                HTTPExchange.closeDescriptor(descriptor)
            }
            return false
        }
        let raw = processor.finalize(response, requestID: requestID)
        if !exchange.respond(raw) {
            processor.logger.info("response not delivered", ["reqid": .string(requestID), "reason": "client gone or server stopping"])
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // Path only: the query may carry an upload token or signature.
        processor.logger.info("request", [
            "method": .string(method.rawValue),
            "path": .string(path),
            "status": .int(Int64(raw.status)),
            "bytes": .int(Int64(response.body.count)),
            "duration_ms": .double((seconds * 1_000_000).rounded() / 1000),
            "reqid": .string(requestID),
            "remote": .string(remoteAddress),
        ])
        processor.observer?(ResponseEvent(
            method: method, route: route, status: raw.status, duration: seconds, bytes: response.body.count
        ))
        return true
    }
}


