import Basics

/// Runs the garbage collector (`Sweeper`) every `sweepIntervalSeconds`: expired v1 blocks, v2
/// uploads and their parts, and stale completion records go, then their blobs; then objects
/// whose `deleteAfterDays` ran out (the lifecycle rule), with the blobs no copy shares.
final class SweeperTask: Sendable {
    private let sweeper: Sweeper
    private let metrics: UpMetrics
    private let logger: Logger
    private let clock: any WallClock
    private let loop = PeriodicTask(name: "sweeper")

    /// Creates a stopped sweeper task.
    init(sweeper: Sweeper, metrics: UpMetrics, logger: Logger, clock: any WallClock) {
        self.sweeper = sweeper
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Starts sweeping every `interval`.
    func start(every interval: Duration) {
        loop.start(every: interval) { [self] in await runOnce(now: clock.unixSeconds) }
    }

    /// Whether the background loop is running.
    var isRunning: Bool { loop.isRunning }

    /// Stops the loop and waits for a sweep in flight.
    func stop() async { await loop.stop() }

    /// One sweep at `now`; errors are logged (the next pass retries; leftover blobs are orphans
    /// for the orphan sweep).
    ///
    /// - Returns: Blocks, uploads and expired objects removed, or 0 after an error.
    @discardableResult
    func runOnce(now: Int64) async -> Int {
        do {
            let plan = try await sweeper.sweep(now: now)
            let removed = plan.blockRows.count + plan.uploadRows.count
            if removed > 0 || !plan.blobs.isEmpty {
                metrics.uploadsExpired.increment(by: Double(removed))
                logger.info("sweep: removed expired uploads", [
                    "blocks": .int(Int64(plan.blockRows.count)), "uploads": .int(Int64(plan.uploadRows.count)),
                    "blobs": .int(Int64(plan.blobs.count)),
                ])
            }
            let expired = try await sweeper.sweepExpiredObjects(now: now)
            if !expired.names.isEmpty {
                logger.info("sweep: deleted objects past deleteAfterDays", [
                    "objects": .int(Int64(expired.names.count)), "blobs": .int(Int64(expired.blobs.count)),
                ])
            }
            return removed + expired.names.count
        } catch {
            logger.error("sweep failed", ["error": .string("\(error)")])
            return 0
        }
    }
}
