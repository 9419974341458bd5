import Basics
import Outbox

/// Redelivers callbacks the synchronous attempt could not deliver (DESIGN.md "Callbacks never
/// get lost"): every few seconds the process's `OutboxWorker` claims due entries one by one —
/// retries whose time has come, and entries whose claim's lease ran out (their owner died mid
/// attempt, in this process's previous life or in another process sharing the index) — tries
/// each once across its URLs and records what `OutboxDelivery` decides.
///
/// The outbox lives in the index (SQLite in production), so pending callbacks survive a restart
/// and are picked up by the next process.
final class OutboxRetrier: Sendable {
    /// Most entries attempted per pass.
    static let batchSize = 32

    private let worker: OutboxWorker
    private let loop = PeriodicTask(name: "outbox-retrier")

    /// Creates a stopped retrier over `outbox`'s worker.
    init(outbox: CallbackOutbox) {
        worker = outbox.worker
    }

    /// Starts retrying in the background every `interval`.
    func start(every interval: Duration) {
        loop.start(every: interval) { [self] in _ = await runOnce() }
    }

    /// Whether the background loop is running.
    var isRunning: Bool { loop.isRunning }

    /// Stops the background loop and waits for a pass in flight.
    func stop() async { await loop.stop() }

    /// One pass, as of the outbox's clock.
    ///
    /// - Returns: How many entries were attempted.
    @discardableResult
    func runOnce() async -> Int {
        await worker.runOnce(limit: Self.batchSize)
    }
}
