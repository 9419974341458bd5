import Foundation
import Synchronization

/// Bytes of whole lines waiting to be written by ``LogSink``'s batched mode: handed to `output`
/// in order, at most `interval` after the first of them arrived (a background thread looks every
/// `interval`), or at once when `maxLines` / `maxBytes` are reached or a line is urgent.
/// `output` runs under the lock, so batches never overtake each other.
final class LineBatch: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var lines = 0
        var timerStarted = false
    }

    private let state = Mutex(State())
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
        let startTimer = state.withLock { state -> Bool in
            state.bytes.append(contentsOf: line)
            state.lines += 1
            if urgent || state.lines >= maxLines || state.bytes.count >= maxBytes { write(&state) }
            defer { state.timerStarted = true }
            return !state.timerStarted
        }
        if startTimer { startFlusher() }
    }

    func flush() {
        state.withLock { write(&$0) }
    }

    private func write(_ state: inout State) {
        guard !state.bytes.isEmpty else { return }
        output(state.bytes)
        state.bytes.removeAll(keepingCapacity: true)
        state.lines = 0
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
