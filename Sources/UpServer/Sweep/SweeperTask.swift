import Basics

/// Runs the garbage collector (`Sweeper`) every `sweepIntervalSeconds`: expired v1 blocks, v2
/// uploads and their parts, and stale completion records go, then their blobs; then objects
/// whose `deleteAfterDays` ran out (the lifecycle rule), with the blobs no copy shares; then
/// orphan blobs. `POST /admin/sweep` runs one pass now (`SweepAdminController`).
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
        loop.start(every: interval) { [self] in await runOnce(now: clock.now()) }
    }

    /// Whether the background loop is running.
    var isRunning: Bool { loop.isRunning }

    /// Stops the loop and waits for a sweep in flight.
    func stop() async { await loop.stop() }

    /// One pass at the clock's time, errors thrown (the admin API answers them).
    func pass() async throws -> SweepReport { try await pass(now: clock.now()) }

    /// One sweep at `now` (Unix seconds); errors are logged (the next pass retries; leftover
    /// blobs are orphans for a later pass).
    ///
    /// - Returns: What was removed, or nil after an error.
    @discardableResult
    func runOnce(now: Double) async -> SweepReport? {
        do {
            return try await pass(now: now)
        } catch {
            logger.error("sweep failed", ["error": .string("\(error)")])
            return nil
        }
    }

    /// Expired rows and their blobs, expired objects, then orphans — each step logged when it
    /// removed something.
    func pass(now: Double) async throws -> SweepReport {
        let seconds = Int64(now.rounded(.down))
        let plan = try await sweeper.sweep(now: seconds)
        let removed = plan.blockRows.count + plan.uploadRows.count
        if removed > 0 || !plan.blobs.isEmpty {
            metrics.uploadsExpired.increment(by: Double(removed))
            logger.info("sweep: removed expired uploads", [
                "blocks": .int(Int64(plan.blockRows.count)), "uploads": .int(Int64(plan.uploadRows.count)),
                "blobs": .int(Int64(plan.blobs.count)),
            ])
        }
        let expired = try await sweeper.sweepExpiredObjects(now: seconds)
        if !expired.names.isEmpty {
            logger.info("sweep: deleted objects past deleteAfterDays", [
                "objects": .int(Int64(expired.names.count)), "blobs": .int(Int64(expired.blobs.count)),
            ])
        }
        let orphans = try await sweeper.sweepOrphans(now: now)
        if !orphans.isEmpty {
            metrics.orphansRemoved.increment(by: Double(orphans.count))
            logger.info("sweep: removed orphan blobs", [
                "orphans": .int(Int64(orphans.count)), "graceSeconds": .int(sweeper.orphanGraceSeconds),
            ])
        }
        return SweepReport(
            blocks: plan.blockRows.count, uploads: plan.uploadRows.count, objects: expired.names.count,
            orphans: orphans.count)
    }
}
