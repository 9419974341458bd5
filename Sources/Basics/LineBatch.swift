import Foundation
import Synchronization

/// Bytes of whole lines waiting to be written by ``LogSink``'s batched mode: handed to `output`
/// in order, at most `interval` after the first of them arrived (a background thread looks every
/// `interval`), or at once when `maxLines` / `maxBytes` are reached or a line is urgent.
///
/// Two locks, so a line never waits for a write: `state` gathers lines and queues full batches
/// (held for a copy), `writer` is held while batches are written. Whoever queues a batch then
/// takes `writer` and writes every batch queued by then, in queue order; a batch queued while
/// another thread writes goes out with the next drain, at the latest its own thread's. So
/// batches never overtake each other, and an urgent line is written when `append` returns.
/// (With `output` under the one lock, the two token workers of biz-server waited for each
/// other's `write` calls: the lock's slow path was ~1 % of biz-server's samples under wrk.)
final class LineBatch: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var lines = 0
        var timerStarted = false
        /// Full batches, oldest first, waiting for the writer.
        var queued: [[UInt8]] = []
    }

    private let state = Mutex(State())
    /// Held while `output` runs; taken before `state` when both are (never the other way).
    private let writer = Mutex(())
    private let maxLines: Int
    private let maxBytes: Int
    private let interval: Duration
    private let output: @Sendable ([UInt8]) -> Void

    init(maxLines: Int, maxBytes: Int, interval: Duration, output: @escaping @Sendable ([UInt8]) -> Void) {
        self.maxLines = max(1, maxLines)
        self.maxBytes = max(1, maxBytes)
        self.interval = interval
        self.output = output
    }

    func append(_ line: [UInt8], urgent: Bool) {
        let (full, startTimer) = state.withLock { state -> (Bool, Bool) in
            state.bytes.append(contentsOf: line)
            state.lines += 1
            let full = urgent || state.lines >= maxLines || state.bytes.count >= maxBytes
            if full { Self.queue(&state) }
            defer { state.timerStarted = true }
            return (full, !state.timerStarted)
        }
        if full { drain() }
        if startTimer { startFlusher() }
    }

    func flush() {
        state.withLock { Self.queue(&$0) }
        drain()
    }

    /// Moves the lines gathered so far to the end of the queue.
    private static func queue(_ state: inout State) {
        guard !state.bytes.isEmpty else { return }
        state.queued.append(state.bytes)
        state.bytes = []
        state.bytes.reserveCapacity(state.queued[state.queued.count - 1].count)
        state.lines = 0
    }

    /// Writes every batch queued so far, in order.
    private func drain() {
        writer.withLock { _ in
            let batches = state.withLock { state -> [[UInt8]] in
                defer { state.queued = [] }
                return state.queued
            }
            for batch in batches { output(batch) }
        }
    }

    /// One thread per batch, for the process's lifetime (servers have one sink).
    private func startFlusher() {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: seconds)
                flush()
            }
        }
        thread.name = "log-flush"
        thread.start()
    }

    private static let atExit = Mutex<(registered: Bool, batches: [LineBatch])>((false, []))

    /// Flushes `batch` when the process ends through `exit` (also after a SIGTERM stop).
    static func flushAtExit(_ batch: LineBatch) {
        let register = atExit.withLock { entry -> Bool in
            entry.batches.append(batch)
            defer { entry.registered = true }
            return !entry.registered
        }
        if register { atexit { LineBatch.flushAll() } }
    }

    private static func flushAll() {
        for batch in atExit.withLock({ $0.batches }) { batch.flush() }
    }
}
