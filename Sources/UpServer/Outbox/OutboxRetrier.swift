import Basics
import UpCore

/// Redelivers callbacks the synchronous attempt could not deliver (DESIGN.md "Callbacks never
/// get lost"): every few seconds it takes the due outbox entries, tries each once across its
/// URLs and records the outcome, backing off per `UpServerConfiguration.Callback.retryDelay`.
///
/// The outbox lives in the index (SQLite in production), so pending callbacks survive a restart
/// and are picked up by the next process. Entries are handled one at a time: callbacks are rare
/// next to uploads, and a biz-server that is down should not be hammered in parallel.
final class OutboxRetrier: Sendable {
    /// Entries taken per pass.
    static let batchSize = 32

    private let index: any UpIndex
    private let callbacks: any CallbackDelivering
    private let settings: UpServerConfiguration.Callback
    private let metrics: UpMetrics
    private let logger: Logger
    private let clock: any WallClock
    private let loop = PeriodicTask(name: "outbox-retrier")

    /// Creates a stopped retrier.
    init(
        index: any UpIndex, callbacks: any CallbackDelivering, settings: UpServerConfiguration.Callback,
        metrics: UpMetrics, logger: Logger, clock: any WallClock
    ) {
        self.index = index
        self.callbacks = callbacks
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Starts retrying in the background every `interval`.
    func start(every interval: Duration) {
        loop.start(every: interval) { [self] in _ = await runOnce(now: clock.unixSeconds) }
    }

    /// Whether the background loop is running.
    var isRunning: Bool { loop.isRunning }

    /// Stops the background loop and waits for a pass in flight.
    func stop() async { await loop.stop() }

    /// The time a fresh entry (no attempt recorded yet) is left to the synchronous attempt of
    /// the request that created it: every URL's timeout plus a margin. Without it the retrier
    /// could send the same callback while the uploader's request is still waiting for it. An
    /// entry that stays at zero attempts longer than this lost its synchronous attempt to a
    /// crash and is delivered here.
    func synchronousGrace(for entry: OutboxEntry) -> Int64 {
        Int64(settings.timeoutSeconds.rounded(.up)) * Int64(max(entry.request.urls.count, 1)) + 5
    }

    /// One pass: delivers every due entry once.
    ///
    /// - Parameter now: Unix seconds.
    /// - Returns: How many entries were attempted.
    @discardableResult
    func runOnce(now: Int64) async -> Int {
        let due: [OutboxEntry]
        do {
            due = try await index.dueCallbacks(now: now, limit: Self.batchSize)
        } catch {
            logger.error("outbox: cannot read due callbacks", ["error": .string("\(error)")])
            return 0
        }
        var attempted = 0
        for entry in due where !Task.isCancelled {
            if entry.attempts == 0, now < entry.nextAttemptAt + synchronousGrace(for: entry) { continue }
            attempted += 1
            await attempt(entry, now: now)
        }
        if let depth = try? await index.outboxDepth() { metrics.outboxDepth.set(Double(depth)) }
        return attempted
    }

    /// Delivers `entry` once and records the outcome. Logs name the entry, never the body or a
    /// signature; the reason holds URLs without their query.
    private func attempt(_ entry: OutboxEntry, now: Int64) async {
        metrics.callbackAttempts.increment()
        let attempt = entry.attempts + 1
        let outcome = await callbacks.deliver(entry.request)
        do {
            switch outcome {
            case .delivered(let reply):
                try await index.markDelivered(entry.id, reply: String(decoding: reply, as: UTF8.self))
                logger.info("outbox: callback delivered", [
                    "outboxId": .int(entry.id), "bucket": .string(entry.bucket), "key": .string(entry.key),
                    "attempt": .int(Int64(attempt)),
                ])
            case .failed(let reason):
                metrics.callbackFailures.increment()
                // Attempt n (the synchronous one counts) failed → wait retryDelay(n); nil after
                // maxRetries background attempts: failed for good, kept for /admin/outbox.
                let next = settings.retryDelay(afterAttempt: attempt).map { now + $0 }
                try await index.markAttemptFailed(entry.id, error: reason, nextAttemptAt: next)
                let message = next == nil ? "outbox: callback failed for good" : "outbox: callback failed, will retry"
                logger.log(next == nil ? .error : .warning, message, [
                    "outboxId": .int(entry.id), "bucket": .string(entry.bucket), "key": .string(entry.key),
                    "attempt": .int(Int64(attempt)), "reason": .string(reason), "nextAttemptAt": .int(next ?? 0),
                ])
            }
        } catch {
            logger.error("outbox: cannot record attempt", [
                "outboxId": .int(entry.id), "attempt": .int(Int64(attempt)), "error": .string("\(error)"),
            ])
        }
    }
}
