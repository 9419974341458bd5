import Foundation
import NativeOS
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of ``URLSessionTransport``: turns URLSession's delegate events into the response
/// head, the body pieces and the outcome, and enforces the whole-exchange timeout with its own
/// timer (URLSession's timeouts are idle timers, and FoundationNetworking ignores the request's).
final class Exchange: Sendable {
    private struct State {
        var head: TransportResponse?
        var headWaiter: CheckedContinuation<TransportResponse, any Error>?
        var pieces = ByteQueue()
        var reader: CheckedContinuation<[UInt8]?, any Error>?
        /// nil while running; then `.success` or the failure.
        var outcome: Result<Void, TransportError>?
        /// Why this side cancelled the task (timeout, caller cancelled, body dropped).
        var reason: TransportError?
        var timer: Task<Void, Never>?
        var sent: Int64 = 0
    }

    private let task: URLSessionTask
    private let progress: (@Sendable (Int64) -> Void)?
    private let cleanup: @Sendable () -> Void
    private let state = Mutex(State())

    init(task: URLSessionTask, progress: (@Sendable (Int64) -> Void)?, cleanup: @escaping @Sendable () -> Void) {
        self.task = task
        self.progress = progress
        self.cleanup = cleanup
    }

    /// Starts the task and the timer that fails it at `deadline`.
    func start(deadline: ContinuousClock.Instant) {
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            self?.cancel(TransportError(.timeout, "no complete response within the request's timeout"))
        }
        state.withLock { $0.timer = timer }
        task.resume()
    }

    /// Fails the exchange with `reason` (unless it already ended) and cancels the task.
    func cancel(_ reason: TransportError) {
        let running = state.withLock { state in
            guard state.outcome == nil else { return false }
            if state.reason == nil { state.reason = reason }
            return true
        }
        if running { task.cancel() }
    }

    /// Waits for the response head; the body is read through the returned ``ResponseBody``.
    func head() async throws -> StreamingResponse {
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<TransportResponse, any Error>) in
                state.withLock { state in
                    if let head = state.head {
                        waiter.resume(returning: head)
                    } else if case .failure(let error) = state.outcome {
                        waiter.resume(throwing: error)
                    } else {
                        state.headWaiter = waiter
                    }
                }
            }
        } onCancel: {
            self.cancel(TransportError(.cancelled, "the calling task was cancelled"))
        }
        let body = ResponseBody(
            next: { try await self.next() },
            cancel: { self.cancel(TransportError(.cancelled, "the response body was dropped before its end")) })
        return StreamingResponse(head: head, body: body)
    }

    /// The next body piece, nil at the end.
    private func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<[UInt8]?, any Error>) in
                state.withLock { state in
                    if let reason = state.reason {
                        // Stopped by this side: what was read ahead is not handed out any more.
                        state.pieces.removeAll()
                        reader.resume(throwing: reason)
                    } else if let piece = state.pieces.popFirst() {
                        reader.resume(returning: piece)
                    } else if let outcome = state.outcome {
                        reader.resume(with: outcome.map { nil })
                    } else {
                        state.reader = reader
                    }
                }
            }
        } onCancel: {
            self.cancel(TransportError(.cancelled, "the reading task was cancelled"))
        }
    }

    // MARK: Events (on the session's serial delegate queue)

    func received(_ data: Data, response: URLResponse?) {
        state.withLock { state in
            deliverHead(&state, response: response)
            let piece = [UInt8](data)
            if let reader = state.reader {
                state.reader = nil
                reader.resume(returning: piece)
            } else {
                state.pieces.append(piece)
            }
        }
    }

    func sent(total: Int64) {
        let advanced = state.withLock { state in
            guard total > state.sent else { return false }
            state.sent = total
            return true
        }
        if advanced { progress?(total) }
    }

    func completed(_ error: (any Error)?, response: URLResponse?) {
        let timer = state.withLock { state -> Task<Void, Never>? in
            let outcome: Result<Void, TransportError>
            if let error {
                outcome = .failure(state.reason ?? Self.transportError(error))
            } else if response is HTTPURLResponse {
                outcome = .success(())
            } else {
                outcome = .failure(TransportError(.other, "the reply was not an HTTP response"))
            }
            state.outcome = outcome
            if case .success = outcome { deliverHead(&state, response: response) }
            if let waiter = state.headWaiter, case .failure(let error) = outcome {
                state.headWaiter = nil
                waiter.resume(throwing: error)
            }
            if let reader = state.reader {
                state.reader = nil
                reader.resume(with: outcome.map { nil })
            }
            return state.timer
        }
        timer?.cancel()
        cleanup()
    }

    /// Records the head once and hands it to a waiting ``head()``.
    private func deliverHead(_ state: inout State, response: URLResponse?) {
        guard state.head == nil, let http = response as? HTTPURLResponse else { return }
        let fields = http.allHeaderFields.compactMap { name, value -> (String, String)? in
            guard let name = name as? String else { return nil }
            return (name, value as? String ?? "\(value)")
        }
        let head = TransportResponse(status: http.statusCode, headers: fields.sorted { $0.0 < $1.0 })
        state.head = head
        if let waiter = state.headWaiter {
            state.headWaiter = nil
            waiter.resume(returning: head)
        }
    }

    /// The one place a URLSession failure becomes a ``TransportError``.
    static func transportError(_ error: any Error) -> TransportError {
        guard let error = error as? URLError else { return TransportError(.other, "\(error)") }
        let kind: TransportError.Kind = switch error.code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: .connect
        case .timedOut: .timeout
        case .cancelled: .cancelled
        case .badURL, .unsupportedURL: .invalidRequest
        case .fileDoesNotExist: .io(errno: ENOENT)
        case .noPermissionsToReadFile: .io(errno: EACCES)
        default: .other
        }
        return TransportError(kind, error.localizedDescription)
    }
}

/// The session's delegate: routes each task's events to its ``Exchange``.
final class SessionEvents: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Mutex<[Int: Exchange]>([:])

    func register(_ exchange: Exchange, for task: Int) {
        exchanges.withLock { $0[task] = exchange }
    }

    private func exchange(_ task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(dataTask)?.received(data, response: dataTask.response)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchange(task)?.sent(total: totalBytesSent)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.completed(error, response: task.response)
    }

    /// Redirects are returned to the caller, not followed (as ``CurlTransport`` does).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
