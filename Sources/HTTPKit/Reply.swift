import Basics
import Synchronization
internal import NativeHTTP

/// The single answer to one request: whoever sends first (handler, deadline, early refusal) wins,
/// and only the winner goes through the pipeline's report hooks (access log, metrics).
final class Reply: Sendable {
    private let exchange: HTTPExchange
    private let pipeline: ResponsePipeline
    private let request: Request
    private let started = ContinuousClock.now
    private let sent = Mutex(false)

    init(exchange: HTTPExchange, request: Request, pipeline: ResponsePipeline) {
        self.exchange = exchange
        self.pipeline = pipeline
        self.request = request
    }

    /// Whether an answer has been sent (a deferred handler whose deadline came first is not run).
    var isSent: Bool { sent.withLock { $0 } }

    /// Sends `response` unless another was sent first, then reports it with the handler's
    /// `fields`. Returns whether this one was sent.
    @discardableResult
    func send(_ response: consuming Response, route: String, fields: AccessLogFields? = nil) -> Bool {
        let first = sent.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else {
            response.body.discard()
            return false
        }
        let bytes = response.body.count
        // Handed over, not copied: a copy would share the headers' storage, and the way out's
        // first added header would copy them again.
        let raw = pipeline.raw(consume response, for: request)
        if !exchange.respond(raw) {
            pipeline.logger.info(
                "response not delivered", ["reqid": .string(request.requestID), "reason": "client gone or server stopping"])
        }
        let duration = ContinuousClock.now - started
        pipeline.report(ResponseEvent(
            method: request.method, route: route, status: raw.status, duration: duration.seconds,
            bytes: bytes, path: request.path, requestID: request.requestID,
            remoteAddress: request.remoteAddress, fields: fields?.all ?? []))
        return true
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
