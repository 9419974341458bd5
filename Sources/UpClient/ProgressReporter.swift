import Synchronization

/// Collects progress from the upload's tasks and the transport's I/O thread and delivers it to
/// the caller's callback on a task of its own, in order, never decreasing.
///
/// `bytesSent` = acknowledged bytes + body bytes of requests in flight, clamped so it never goes
/// below the last report: a request that fails and is retried does not take its bytes back.
/// A report goes out after each acknowledged chunk or part, and while bytes move at most every
/// 50 ms with the exact count (a slow or rate-limited upload moves visibly, byte by byte, and a
/// fast one does not pay for thousands of reports per GiB). Reports queue in an `AsyncStream` that keeps the newest 64, so a slow callback sees fewer,
/// fresher reports and never holds the upload up; ``finish()`` waits until the last is delivered.
final class ProgressReporter: Sendable {
    private struct State {
        var acknowledged: Int64 = 0
        var inFlight: [Int: Int64] = [:]
        var nextID = 0
        var lastReported: Int64 = -1
        var lastReportedAt: ContinuousClock.Instant?
        var blocks: [UploadProgress.BlockState]?
    }

    private let total: Int64
    private let state = Mutex(State())
    private let clock = ContinuousClock()
    private let continuation: AsyncStream<UploadProgress>.Continuation?
    private let consumer: Task<Void, Never>?

    init(total: Int64, callback: (@Sendable (UploadProgress) -> Void)?) {
        self.total = total
        if let callback {
            let (stream, continuation) = AsyncStream<UploadProgress>.makeStream(bufferingPolicy: .bufferingNewest(64))
            self.continuation = continuation
            consumer = Task.detached {
                for await progress in stream { callback(progress) }
            }
        } else {
            continuation = nil
            consumer = nil
        }
    }

    /// Sets the acknowledged bytes and block states (after each acknowledged chunk or part).
    func update(acknowledged: Int64, blocks: [UploadProgress.BlockState]?) {
        state.withLock { state in
            state.acknowledged = acknowledged
            state.blocks = blocks
        }
        emit(force: true)
    }

    /// Starts tracking a request; returns its id for ``sent(_:bytes:)`` and ``end(_:)``.
    func begin() -> Int {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.inFlight[id] = 0
            return id
        }
    }

    /// The transport's progress callback for request `id` (runs on its I/O thread: cheap).
    func sent(_ id: Int, bytes: Int64) {
        let changed = state.withLock { state in
            guard state.inFlight[id] != nil else { return false }
            state.inFlight[id] = bytes
            return true
        }
        if changed { emit(force: false) }
    }

    /// The acknowledged bytes last set (what the checkpoint holds, when there is one).
    var acknowledgedBytes: Int64 { state.withLock { $0.acknowledged } }

    /// Stops tracking request `id` (before the acknowledged total is updated).
    func end(_ id: Int) {
        _ = state.withLock { $0.inFlight.removeValue(forKey: id) }
    }

    /// Emits a report when the byte count grew (see the type's comment), or always with `force`.
    private func emit(force: Bool) {
        guard let continuation else { return }
        let now = clock.now
        let report: UploadProgress? = state.withLock { state in
            let current = min(total, state.acknowledged + state.inFlight.values.reduce(0, +))
            let bytes = max(current, state.lastReported)
            let grew = bytes > state.lastReported
            let quiet = state.lastReportedAt.map { now - $0 >= .milliseconds(50) } ?? true
            guard force || (grew && (quiet || bytes == total)) else { return nil }
            state.lastReported = bytes
            state.lastReportedAt = now
            return UploadProgress(bytesSent: bytes, totalBytes: total, blocks: state.blocks)
        }
        if let report { continuation.yield(report) }
    }

    /// Delivers the remaining reports and ends the consumer task.
    func finish() async {
        continuation?.finish()
        await consumer?.value
    }
}
