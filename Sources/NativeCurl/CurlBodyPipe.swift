internal import NativeOS
import Synchronization

/// A request body written by an async producer while libcurl sends it: the bytes of an upload
/// chunk go from the incoming connection to the outgoing one through at most `window` bytes of
/// memory (plus the piece being written).
///
/// The producer calls ``write(_:)`` (it suspends while the window is full), then ``finish()`` or
/// ``fail(_:)``. On the loop thread, libcurl's read callback takes bytes; when none are there it
/// pauses the transfer (`CURL_READFUNC_PAUSE`), and the next write asks the loop to unpause it.
/// When the transfer ends for any reason the pipe closes and a waiting or later write throws.
public final class CurlBodyPipe: Sendable {
    private struct State {
        var queue = ByteQueue()
        var finished = false
        var failure: String?
        var closed = false
        var readerPaused = false
        var waitingWriter: CheckedContinuation<Void, Never>?
        var resume: (@Sendable () -> Void)?
    }

    /// What a read callback should return.
    enum ReadOutcome {
        case bytes(Int)
        case end
        case pause
        case failed(String)
    }

    /// The most bytes held before ``write(_:)`` waits.
    public let window: Int
    private let state = Mutex(State())

    /// Creates a pipe holding at most `window` bytes (at least 1) between producer and socket.
    public init(window: Int = 256 << 10) {
        self.window = max(1, window)
    }

    /// Appends `bytes`; returns once fewer than `window` bytes wait to be sent.
    ///
    /// - Throws: ``CurlError/Code/abortedByCallback`` when the transfer already ended (failed, was
    ///   cancelled, or the server answered before taking the whole body).
    public func write(_ bytes: [UInt8]) async throws(CurlError) {
        let (accepted, wake, full, resume) = state.withLock { s in
            guard !s.closed, !s.finished, s.failure == nil else { return (false, false, false, s.resume) }
            s.queue.append(bytes)
            let wake = s.readerPaused
            s.readerPaused = false
            return (true, wake, s.queue.count >= window, s.resume)
        }
        guard accepted else { throw Self.closedError }
        if wake { resume?() }
        guard full else { return }
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s in
                if s.closed || s.queue.count < window { return true }
                s.waitingWriter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        if state.withLock({ $0.closed }) { throw Self.closedError }
    }

    /// Marks the end of the body.
    public func finish() {
        let (wake, resume) = state.withLock { s in
            s.finished = true
            defer { s.readerPaused = false }
            return (s.readerPaused, s.resume)
        }
        if wake { resume?() }
    }

    /// Ends the body with a failure: the transfer is aborted and fails with a read error.
    public func fail(_ message: String) {
        let (wake, resume) = state.withLock { s in
            if s.failure == nil { s.failure = message }
            defer { s.readerPaused = false }
            return (s.readerPaused, s.resume)
        }
        if wake { resume?() }
    }

    /// Sets what unpauses the transfer (a message to the loop thread).
    func attach(resume: @escaping @Sendable () -> Void) {
        state.withLock { $0.resume = resume }
    }

    /// Called by the read callback on the loop thread.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadOutcome {
        let (outcome, writer) = state.withLock { s -> (ReadOutcome, CheckedContinuation<Void, Never>?) in
            if let failure = s.failure { return (.failed(failure), nil) }
            if !s.queue.isEmpty {
                let count = unsafe s.queue.take(into: buffer)
                var writer: CheckedContinuation<Void, Never>?
                if s.queue.count < window { swap(&writer, &s.waitingWriter) }
                return (.bytes(count), writer)
            }
            if s.finished { return (.end, nil) }
            s.readerPaused = true
            return (.pause, nil)
        }
        writer?.resume()
        return outcome
    }

    /// The transfer ended: wakes a waiting writer and refuses further writes.
    func close() {
        let writer = state.withLock { s in
            s.closed = true
            var writer: CheckedContinuation<Void, Never>?
            swap(&writer, &s.waitingWriter)
            return writer
        }
        writer?.resume()
    }

    private static var closedError: CurlError {
        CurlError(code: .abortedByCallback, message: "the transfer ended before the request body was sent")
    }
}

extension CurlBodyPipe: Equatable {
    /// Pipes are equal when they are the same pipe.
    public static func == (a: CurlBodyPipe, b: CurlBodyPipe) -> Bool { a === b }
}
