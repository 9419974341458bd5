internal import NativeOS
import Synchronization

/// A response body handed from libcurl's write callback to an async consumer as it arrives,
/// holding at most `window` bytes (plus one write of at most 16 KiB): when the consumer falls
/// behind, the write callback pauses the transfer (`CURL_WRITEFUNC_PAUSE`, libcurl keeps the
/// bytes and stops reading the socket, so TCP pushes back on the server) and the next read asks
/// the loop to unpause it.
///
/// Read it once with ``next()``; ``cancel()`` (or cancelling the reading task) stops the transfer.
public final class CurlResponsePipe: Sendable {
    private struct State {
        var queue = ByteQueue()
        var finished = false
        var failure: CurlError?
        var writerPaused = false
        var waitingReader: CheckedContinuation<Void, Never>?
        var resume: (@Sendable () -> Void)?
        var cancelTransfer: (@Sendable () -> Void)?
    }

    /// What the write callback should return.
    enum WriteOutcome {
        case accepted
        case pause
        case refuse
    }

    /// The most bytes held before the transfer pauses.
    public let window: Int
    private let state = Mutex(State())

    init(window: Int) {
        self.window = max(1, window)
    }

    /// The bytes that arrived since the last call (at most about `window`), or nil at the end.
    ///
    /// - Throws: The transfer's failure (a cut connection is ``CurlError/Code/partialFile``),
    ///   ``CurlError/Code/abortedByCallback`` after ``cancel()`` or when the task is cancelled.
    public func next() async throws(CurlError) -> [UInt8]? {
        while true {
            let (bytes, end, failure, resume) = state.withLock { s -> ([UInt8]?, Bool, CurlError?, (@Sendable () -> Void)?) in
                if !s.queue.isEmpty {
                    let bytes = s.queue.takeAll()
                    let wake = s.writerPaused
                    s.writerPaused = false
                    return (bytes, false, nil, wake ? s.resume : nil)
                }
                return (nil, s.finished, s.failure, nil)
            }
            if let bytes {
                resume?()
                return bytes
            }
            if let failure { throw failure }
            if end { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { s in
                        if !s.queue.isEmpty || s.finished || s.failure != nil { return true }
                        s.waitingReader = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                self.cancel()
            }
        }
    }

    /// Stops the transfer; bytes not yet read are dropped and later reads throw.
    public func cancel() {
        let (reader, cancelTransfer) = state.withLock { s in
            if !s.finished && s.failure == nil {
                s.failure = CurlError(code: .abortedByCallback, message: "response body read cancelled")
            }
            s.queue = ByteQueue()
            var reader: CheckedContinuation<Void, Never>?
            swap(&reader, &s.waitingReader)
            return (reader, s.finished ? nil : s.cancelTransfer)
        }
        reader?.resume()
        cancelTransfer?()
    }

    /// Sets what unpauses the transfer and what cancels it (messages to the loop thread).
    func attach(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        state.withLock { s in
            s.resume = resume
            s.cancelTransfer = cancel
        }
    }

    /// Called by the write callback on the loop thread.
    func receive(_ bytes: UnsafeRawBufferPointer) -> WriteOutcome {
        let (outcome, reader) = state.withLock { s -> (WriteOutcome, CheckedContinuation<Void, Never>?) in
            if s.failure != nil { return (.refuse, nil) }
            if s.queue.count >= window {
                s.writerPaused = true
                return (.pause, nil)
            }
            s.queue.append(unsafe Array(bytes))
            var reader: CheckedContinuation<Void, Never>?
            swap(&reader, &s.waitingReader)
            return (.accepted, reader)
        }
        reader?.resume()
        return outcome
    }

    /// The transfer ended: `failure` nil for a complete body.
    func finish(_ failure: CurlError?) {
        let reader = state.withLock { s in
            if let failure, s.failure == nil { s.failure = failure }
            s.finished = true
            var reader: CheckedContinuation<Void, Never>?
            swap(&reader, &s.waitingReader)
            return reader
        }
        reader?.resume()
    }
}
