import Basics
import Synchronization
internal import NativeHTTP

/// Turns each libmicrohttpd exchange into a routed handler call and back into one response.
///
/// Runs on an MHD worker thread until the route is known: answers that need no handler (404,
/// 405, 413 by `Content-Length`) are given synchronously, so MHD can reply before reading a body.
/// A synchronous route's body is collected on that thread and its handler runs there too, so its
/// response is queued without suspending the connection. A deferred route's handler starts there
/// too and answers later, through its ``Responder``. Everything else runs in a task. Deferred
/// and task routes race a deadline: a suspended connection has no timeout of its own
/// (microhttpd.h, MHD_suspend_connection), so this is the only one it gets.
///
/// Every answer, from a handler or not, leaves through the router's middleware (``ResponsePipeline``);
/// a thrown error becomes a response in the middleware's ``Middleware/recover(_:request:context:)``.
final class ExchangeProcessor: Sendable {
    /// The routes and their pipeline; a server may replace them while it runs (a configuration
    /// reload): each request keeps the ones current when its head arrived.
    private let current: Mutex<(router: Router, pipeline: ResponsePipeline)>
    let logger: Logger
    let handlerTimeout: Duration
    /// The deadlines of the handlers running in tasks.
    let deadlines = HandlerDeadlines()
    /// The server's own pieces (its observer), inside the router's.
    private let extra: [any Middleware]
    /// Who the client is, from the peer address and the headers (trusted proxies).
    let clientAddress: (@Sendable (String, HTTPHeaders) -> String)?

    init(
        router: Router, logger: Logger, extra: [any Middleware], handlerTimeout: Duration,
        clientAddress: (@Sendable (String, HTTPHeaders) -> String)? = nil
    ) {
        self.logger = logger
        self.extra = extra
        self.handlerTimeout = handlerTimeout
        self.clientAddress = clientAddress
        current = Mutex((router, Self.pipeline(of: router, extra: extra, logger: logger)))
    }

    /// The routes new requests use.
    var router: Router {
        get { current.withLock { $0.router } }
        set {
            let pipeline = Self.pipeline(of: newValue, extra: extra, logger: logger)
            current.withLock { $0 = (newValue, pipeline) }
        }
    }

    /// The pipeline new requests use (also for answers given outside any request: shutdown).
    var pipeline: ResponsePipeline { current.withLock { $0.pipeline } }

    private static func pipeline(of router: Router, extra: [any Middleware], logger: Logger) -> ResponsePipeline {
        var stack = router.middleware
        for piece in extra { stack.append(piece) }
        return ResponsePipeline(middleware: stack, logger: logger)
    }

    func accept(_ exchange: HTTPExchange) {
        let (router, pipeline) = current.withLock { $0 }
        let raw = exchange.request
        let headers = HTTPHeaders(raw.headers)
        var request = Request(
            method: HTTPMethod(rawValue: raw.method),
            target: raw.target,
            headers: headers,
            remoteAddress: clientAddress?(raw.remoteAddress, headers) ?? raw.remoteAddress,
            requestID: ""
        )
        pipeline.middleware.prepare(&request)
        let reply = Reply(exchange: exchange, request: request, pipeline: pipeline)
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
                runInline(route, handler, request: request, exchange: exchange, reply: reply, pipeline: pipeline)
            } else if let handler = route.deferredHandler {
                runDeferred(route, handler, request: request, exchange: exchange, reply: reply, pipeline: pipeline)
            } else {
                runInTask(route, request: request, exchange: exchange, reply: reply, pipeline: pipeline)
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
        _ route: Route, _ handler: @escaping SyncHTTPHandler, request: Request, exchange: HTTPExchange, reply: Reply,
        pipeline: ResponsePipeline
    ) {
        let routeName = route.pattern.description
        let logger = self.logger
        collectOnWorker(route, request: request, exchange: exchange, reply: reply) { request in
            let context = RequestContext(requestID: request.requestID, logger: logger, route: routeName)
            let response: Response
            do {
                response = try RequestContext.$current.withValue(context) { try handler(request, context) }
            } catch {
                response = pipeline.middleware.recover(error, request: request, context: context)
            }
            reply.send(consume response, route: routeName, fields: context.logFields)
        }
    }

    /// A deferred route: body and handler on this MHD worker thread, the answer whenever the
    /// handler's ``Responder`` gives it (from any thread), or 503 at the deadline.
    private func runDeferred(
        _ route: Route, _ handler: @escaping DeferredHTTPHandler, request: Request, exchange: HTTPExchange, reply: Reply,
        pipeline: ResponsePipeline
    ) {
        let routeName = route.pattern.description
        let context = RequestContext(requestID: request.requestID, logger: logger, route: routeName)
        let ticket = armDeadline(route, request: request, reply: reply, context: context)
        collectOnWorker(route, request: request, exchange: exchange, reply: reply, failed: {
            self.deadlines.end(ticket)
        }) { request in
            // A body completed after the deadline: answered 503 already, the handler never runs
            // (as a task's never starts), so it spends nothing, a rate-limit token included.
            guard !reply.isSent else { return }
            let responder = Responder { result in
                let response: Response
                switch result {
                case .success(let answer): response = answer
                case .failure(let error): response = pipeline.middleware.recover(error, request: request, context: context)
                }
                reply.send(consume response, route: routeName, fields: context.logFields)
                self.deadlines.end(ticket)
            }
            do {
                try RequestContext.$current.withValue(context) { try handler(request, context, responder) }
            } catch {
                responder.answer { throw error }
            }
        }
    }

    /// The deadline of a deferred or task route's answer, from now: when it passes, `expire`
    /// runs (a task's cancellation), then 503 is sent unless an answer was, and logged.
    private func armDeadline(
        _ route: Route, request: Request, reply: Reply, context: RequestContext,
        expire: @escaping @Sendable () -> Void = {}
    ) -> HandlerDeadlines.Ticket {
        let ticket = deadlines.reserve()
        let logger = self.logger
        deadlines.arm(ticket, after: route.timeout ?? handlerTimeout) {
            expire()
            if reply.send(.rendering(HTTPError.timedOut), route: context.route, fields: context.logFields) {
                logger.warning("handler timed out", ["reqid": .string(request.requestID), "route": .string(context.route)])
            }
        }
        return ticket
    }

    /// The largest `.collect` limit whose body an asynchronous route gathers on the MHD worker
    /// thread before its task starts (``runInTask(_:request:exchange:reply:pipeline:)``): a body
    /// that one or a few socket reads bring. Larger ones are read in the task, with backpressure.
    static let collectOnWorkerLimit = 64 << 10

    /// Whether an asynchronous route's body is gathered on the worker thread before its task
    /// starts: a `.collect` within ``collectOnWorkerLimit``.
    private static func collectsOnWorker(_ route: Route) -> Bool {
        if case .collect(let limit) = route.body { limit <= collectOnWorkerLimit } else { false }
    }

    /// Collects the body of a `.collect` route on this MHD worker thread, then calls `then` there
    /// with the complete request. Answers a body over the limit (413) and one the client gave up
    /// on (400, logged) itself, and then calls `failed` instead.
    private func collectOnWorker(
        _ route: Route, request: Request, exchange: HTTPExchange, reply: Reply,
        failed: @escaping @Sendable () -> Void = {}, then: @escaping @Sendable (Request) -> Void
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
                then(request)
            case .tooLarge:
                reply.send(.rendering(HTTPError.payloadTooLarge(limit: limit)), route: routeName)
                failed()
            case .connectionClosed:
                // The client went away mid-body, as in the task path: log the request anyway.
                reply.send(.error(status: 400, message: "request body incomplete"), route: routeName)
                logger.info("request body incomplete", [
                    "reqid": .string(request.requestID), "reason": .string("\(HTTPExchangeError.connectionClosed)"),
                ])
                failed()
            }
        }
    }

    /// Any other route: handler in a task, whose deadline (``HandlerDeadlines``) answers 503 and
    /// cancels it if the handler has not answered by then. The deadline runs from the head, so it
    /// bounds the body's arrival too.
    ///
    /// A small collected body (``collectOnWorkerLimit``) is gathered on this MHD worker thread and
    /// the task starts once it is complete: started at the head, the task would park waiting for
    /// the body that arrives a moment later and be woken for it, and again for its end (on
    /// biz-server's PostgreSQL token route that was a thread wake-up or two more per request).
    private func runInTask(
        _ route: Route, request: Request, exchange: HTTPExchange, reply: Reply, pipeline: ResponsePipeline
    ) {
        let context = RequestContext(requestID: request.requestID, logger: logger, route: route.pattern.description)
        let handler = HandlerTask()
        let ticket = armDeadline(route, request: request, reply: reply, context: context) { handler.cancel() }
        let start: @Sendable (Request) -> Void = { request in
            handler.start {
                Task {
                    await self.run(route, request: request, exchange: exchange, reply: reply, pipeline: pipeline, context: context)
                    self.deadlines.end(ticket)
                }
            }
        }
        if Self.collectsOnWorker(route) {
            collectOnWorker(route, request: request, exchange: exchange, reply: reply, failed: {
                self.deadlines.end(ticket)
            }, then: start)
        } else {
            start(request)
        }
    }

    private func run(
        _ route: Route, request: Request, exchange: HTTPExchange, reply: Reply, pipeline: ResponsePipeline,
        context: RequestContext
    ) async {
        let routeName = context.route
        let pieces = exchange.body
        let result: Result<Response, any Error>
        do {
            var request = request
            switch route.body {
            case .collect where Self.collectsOnWorker(route):
                break  // gathered on the worker thread before this task started
            case .collect(let limit):
                request.body = try await RequestBodyStream(pieces: pieces, limit: limit).collect(upTo: limit)
                request.bodyStream = RequestBodyStream(bytes: request.body)
            case .stream(let limit):
                request.bodyStream = RequestBodyStream(pieces: pieces, limit: limit)
            }
            let response = try await RequestContext.$current.withValue(context) { try await route.handler(request, context) }
            result = .success(response)
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let response):
            reply.send(response, route: routeName, fields: context.logFields)
        case .failure(let error as HTTPExchangeError):
            // The client went away mid-body; nobody will read an answer, but log the request.
            reply.send(.error(status: 400, message: "request body incomplete"), route: routeName, fields: context.logFields)
            logger.info("request body incomplete", ["reqid": .string(request.requestID), "reason": .string("\(error)")])
        case .failure(let error) where error is CancellationError && Task.isCancelled:
            // The handler timed out: its deadline has answered 503 and logged it (warning); the
            // cancellation the handler then ends with is no failure of its own to log again.
            break
        case .failure(let error):
            reply.send(
                pipeline.middleware.recover(error, request: request, context: context), route: routeName,
                fields: context.logFields)
        }
    }
}

/// The task of one handler, started once its request is ready; cancelled by its deadline,
/// before it started too (then it never starts).
final class HandlerTask: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    /// Starts the task `make` creates, unless the deadline came first.
    func start(_ make: () -> Task<Void, Never>) {
        state.withLock { state in
            if !state.cancelled { state.task = make() }
        }
    }

    /// Cancels the task, or keeps it from starting.
    func cancel() {
        state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }?.cancel()
    }
}
