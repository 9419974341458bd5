internal import CMicroHTTPD
internal import NativeOS
import Synchronization

/// A response body of known length whose bytes come from an async ``RawBodySource`` while they
/// are sent: the state shared by libmicrohttpd's content-reader callback (on the connection's
/// worker thread) and the producer task that pulls the source.
///
/// - Window: the producer asks for the next piece only while fewer than ``window`` bytes wait
///   here, so at most `window` plus one piece is held per download (the stores hand pieces of
///   at most 1 MiB).
/// - Never blocking MHD: when the reader finds nothing buffered it suspends the connection
///   (`MHD_suspend_connection`, allowed from the content reader) and returns 0; the producer
///   resumes it after putting a piece. As in ``HTTPExchange``, the suspend happens before the
///   `suspended` flag is visible, so a resume never overtakes its suspend; a suspended
///   connection cannot be freed, so the resume never touches a freed one.
/// - Errors mid-body: if the source throws or ends before `length` bytes, the reader returns
///   `MHD_CONTENT_READER_END_WITH_ERROR` once the buffered bytes are out and MHD closes the
///   connection. The status and `Content-Length` are already sent, so the client sees a body
///   shorter than announced: that is how HTTP/1.1 reports a failure after the head.
/// - Early end: when MHD frees the response before the whole body was produced (client gone,
///   daemon stopping), the producer task is cancelled and the source's `cancel` runs once.
///
/// The producer starts at the first read, so a `HEAD` (MHD never reads its body) costs the
/// source nothing but its `cancel`.
final class StreamedBody: Sendable {
    /// Buffered bytes below which the producer asks the source for more.
    static let window = 1 << 20
    /// The block size MHD reads with (its buffer per response).
    static let blockSize = 64 << 10

    let length: UInt64
    private let source: RawBodySource
    private let connection: ConnectionHandle
    private let state = Mutex(State())

    private struct State {
        var pieces = ByteQueue()
        var produced: UInt64 = 0
        var started = false
        var suspended = false
        /// The source threw or ended short; the reader fails once the buffer is empty.
        var failed = false
        /// The source is done with: fully produced, failed, or cancelled.
        var sourceDone = false
        /// MHD freed the response (or the daemon aborted it): no more reads, no resumes.
        var released = false
        var producer: Task<Void, Never>?
        var waiter: CheckedContinuation<Bool, Never>?
    }

    init(length: UInt64, source: RawBodySource, connection: ConnectionHandle) {
        self.length = length
        self.source = source
        self.connection = connection
    }

    /// Whether the connection is parked waiting for the producer.
    var isSuspended: Bool { state.withLock { $0.suspended } }

    // MARK: MHD side (the connection's worker thread)

    /// The content reader: copies up to `max` buffered bytes to `buffer`; 0 after suspending the
    /// connection when none are buffered yet; `MHD_CONTENT_READER_END_WITH_ERROR` after a failure.
    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        enum Step { case copied(Int, wake: CheckedContinuation<Bool, Never>?), wait(start: Bool), fail }
        let step = state.withLock { s -> Step in
            if s.released { return .fail }
            if !s.pieces.isEmpty {
                let copied = unsafe s.pieces.take(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
                var wake: CheckedContinuation<Bool, Never>?
                if s.pieces.count < Self.window, let waiter = s.waiter {
                    s.waiter = nil
                    wake = waiter
                }
                return .copied(copied, wake: wake)
            }
            // Nothing buffered and nothing more coming (failed, or — never with exact accounting —
            // all produced yet MHD wants more): cut rather than park the connection forever.
            if s.failed || s.sourceDone { return .fail }
            unsafe MHD_suspend_connection(connection.pointer)
            s.suspended = true
            let start = !s.started
            s.started = true
            return .wait(start: start)
        }
        switch step {
        case .copied(let n, let wake):
            wake?.resume(returning: true)
            return n
        case .wait(let start):
            if start {
                let producer = Task { await self.produce() }
                state.withLock { $0.producer = producer }
            }
            return 0
        case .fail:
            return -2  // MHD_CONTENT_READER_END_WITH_ERROR: MHD closes the connection
        }
    }

    /// MHD is done with the response (sent, client gone, daemon stopping): stops the producer and
    /// cancels the source if it was not finished.
    func released() {
        stop(resume: false)
    }

    /// The daemon is stopping: fail the body and resume the connection if parked, so MHD closes
    /// it (`MHD_stop_daemon` must never see a suspended connection).
    func abort() {
        stop(resume: true)
    }

    private func stop(resume: Bool) {
        let (cancel, waiter, producer, wake) = state.withLock {
            s -> (Bool, CheckedContinuation<Bool, Never>?, Task<Void, Never>?, Bool) in
            let cancel = !s.sourceDone
            s.sourceDone = true
            s.failed = true
            if !resume { s.released = true }
            s.pieces.removeAll()
            defer { s.waiter = nil }
            let wake = resume && s.suspended
            if wake { s.suspended = false }
            return (cancel, s.waiter, s.producer, wake)
        }
        if wake { unsafe MHD_resume_connection(connection.pointer) }
        waiter?.resume(returning: false)
        if cancel {
            producer?.cancel()
            source.cancel()
        }
    }

    // MARK: Producer task

    private func produce() async {
        do {
            while await windowOpen() {
                guard let piece = try await source.next() else { return fail() }  // short of `length`
                if !put(piece) { return }
            }
        } catch {
            fail()
        }
    }

    /// Waits until fewer than ``window`` bytes are buffered; `false` once the body is stopped.
    private func windowOpen() async -> Bool {
        await withCheckedContinuation { continuation in
            let open = state.withLock { s -> Bool? in
                if s.sourceDone { return false }
                if s.pieces.count < Self.window { return true }
                s.waiter = continuation
                return nil
            }
            if let open { continuation.resume(returning: open) }
        }
    }

    /// Buffers `piece` (cut to the declared length) and resumes a parked reader. Returns whether
    /// the producer should go on.
    private func put(_ piece: [UInt8]) -> Bool {
        guard !piece.isEmpty else { return true }
        let (more, resume) = state.withLock { s -> (Bool, Bool) in
            guard !s.sourceDone else { return (false, false) }
            let remaining = length - s.produced
            let kept = UInt64(piece.count) > remaining ? Array(piece.prefix(Int(remaining))) : piece
            s.pieces.append(kept)
            s.produced += UInt64(kept.count)
            if s.produced == length { s.sourceDone = true }
            let resume = s.suspended
            s.suspended = false
            return (!s.sourceDone, resume)
        }
        if resume { unsafe MHD_resume_connection(connection.pointer) }
        return more
    }

    /// The source ended before `length` bytes or threw: the reader fails after what is buffered.
    private func fail() {
        let resume = state.withLock { s -> Bool in
            guard !s.sourceDone else { return false }
            s.sourceDone = true
            s.failed = true
            let resume = s.suspended
            s.suspended = false
            return resume
        }
        if resume { unsafe MHD_resume_connection(connection.pointer) }
    }
}
