import Basics
import Synchronization
internal import NativeHTTP

/// The single answer to one request: whoever sends first (handler, deadline, early refusal) wins,
/// and only the winner is logged and observed.
final class Reply: Sendable {
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

    /// Sends `response` unless another was sent first; then writes the access-log line (with the
    /// handler's `fields`) and tells the observer. Returns whether this one was sent.
    @discardableResult
    func send(_ response: Response, route: String, fields: AccessLogFields? = nil) -> Bool {
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
        let seconds = AccessLog.seconds(ContinuousClock.now - started)
        AccessLog.write(
            to: processor.logger, method: method, path: path, status: raw.status, bytes: response.body.count,
            seconds: seconds, requestID: requestID, remoteAddress: remoteAddress, extra: fields)
        processor.observer?(ResponseEvent(
            method: method, route: route, status: raw.status, duration: seconds, bytes: response.body.count
        ))
        return true
    }
}
