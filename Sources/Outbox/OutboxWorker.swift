public import Basics
import Synchronization

/// Carries out ``OutboxDelivery`` for one owner: claims due entries, hands each to the sender,
/// and records the outcome the machine decides. Also runs the first attempt of an entry born
/// claimed by this owner (``attempt(_:)``), so a service's synchronous try and its background
/// retries follow one rule.
///
/// Entries are claimed one at a time, right before they are sent: a claim's lease then covers
/// exactly one attempt, however long the ones before it took, and a receiver that is down is not
/// hammered in parallel. Several workers (one per process) can share a store: the claim keeps
/// them apart.
public struct OutboxWorker: Sendable {
    /// Counters and a gauge the worker keeps up to date; all optional.
    public struct Metrics: Sendable {
        /// Attempts begun.
        public var attempts: Counter?
        /// Attempts that failed.
        public var failures: Counter?
        /// Entries still to be delivered, after each pass.
        public var depth: Gauge?

        /// Creates the set.
        public init(attempts: Counter? = nil, failures: Counter? = nil, depth: Gauge? = nil) {
            self.attempts = attempts
            self.failures = failures
            self.depth = depth
        }
    }

    /// This process's name in claims: unique per process (see ``makeOwnerID(prefix:)``).
    public let owner: String
    private let store: any OutboxStore
    private let clock: any WallClock
    private let sender: any OutboxSender
    private let schedule: @Sendable (OutboxEntry) -> OutboxDelivery.Schedule
    private let jitter: @Sendable () -> Double
    private let metrics: Metrics
    private let logger: Logger
    private let label: String
    private let describe: @Sendable (OutboxEntry) -> [(key: String, value: Logger.Value)]
    /// Deliveries whose outcome the store refused to record; shared by the worker's copies.
    private let unrecorded = UnrecordedDeliveries()

    /// Creates a worker.
    ///
    /// - Parameters:
    ///   - owner: This process's owner id.
    ///   - store: The outbox.
    ///   - sender: Delivers one message.
    ///   - schedule: Retries and the last attempt.
    ///   - clock: Read at each claim and each outcome (a lease starts when its claim is made, a
    ///     retry is due after the attempt that failed, however long the ones before took).
    ///   - metrics: What to count.
    ///   - logger: Where outcomes are logged.
    ///   - label: Prefix of log messages, e.g. `"outbox"`.
    ///   - describe: Log fields naming an entry (never its secrets), besides its id and attempt.
    public init(
        owner: String, store: any OutboxStore, sender: any OutboxSender, schedule: OutboxDelivery.Schedule,
        clock: any WallClock, metrics: Metrics = Metrics(), logger: Logger, label: String = "outbox",
        describe: @escaping @Sendable (OutboxEntry) -> [(key: String, value: Logger.Value)] = { _ in [] }
    ) {
        self.init(
            owner: owner, store: store, sender: sender, scheduleFor: { _ in schedule }, jitter: { 0 }, clock: clock,
            metrics: metrics, logger: logger, label: label, describe: describe)
    }

    /// Creates a worker whose entries may follow different schedules (biz-server: one per
    /// webhook endpoint), with retries spread by `jitter`.
    ///
    /// - Parameters:
    ///   - scheduleFor: The schedule of one entry (read from its payload, say).
    ///   - jitter: Draws a number in 0..<1 for each retry (``OutboxDelivery/Schedule/jitterFraction``).
    ///   - The others: as in ``init(owner:store:sender:schedule:clock:metrics:logger:label:describe:)``.
    public init(
        owner: String, store: any OutboxStore, sender: any OutboxSender,
        scheduleFor: @escaping @Sendable (OutboxEntry) -> OutboxDelivery.Schedule,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        clock: any WallClock, metrics: Metrics = Metrics(), logger: Logger, label: String = "outbox",
        describe: @escaping @Sendable (OutboxEntry) -> [(key: String, value: Logger.Value)] = { _ in [] }
    ) {
        self.owner = owner
        self.store = store
        self.clock = clock
        self.sender = sender
        self.schedule = scheduleFor
        self.jitter = jitter
        self.metrics = metrics
        self.logger = logger
        self.label = label
        self.describe = describe
    }

    /// A fresh owner id: `prefix`, then 16 random URL-safe characters (different for every
    /// process, and every restart, so a restarted process never mistakes an old claim for its own).
    public static func makeOwnerID(prefix: String) -> String {
        prefix + "-" + RandomID.urlSafe(count: 16)
    }

    /// One pass: claims and attempts due entries one by one until none is due, `limit` were
    /// attempted, or the task is cancelled.
    ///
    /// - Parameter limit: Most attempts in this pass.
    /// - Returns: How many entries were attempted.
    @discardableResult
    public func runOnce(limit: Int = 32) async -> Int {
        await recordUnrecorded()
        var attempted = 0
        while attempted < limit, !Task.isCancelled {
            let claimed: [OutboxEntry]
            do {
                claimed = try await store.claimDue(owner: owner, now: clock.unixSeconds, limit: 1)
            } catch {
                // The store refuses writes (down, or its disk full): the next pass tries again.
                logger.warning("\(label): cannot claim due entries", ["error": .string("\(error)")])
                break
            }
            guard let entry = claimed.first else { break }
            attempted += 1
            _ = await attempt(entry)
        }
        if let gauge = metrics.depth, let depth = try? await store.depth() { gauge.set(Double(depth)) }
        return attempted
    }

    /// Attempts an entry this worker holds the claim of — one ``claimDue(owner:now:limit:)``
    /// returned, or one born claimed by ``owner`` — and records the outcome.
    ///
    /// An outcome that cannot be recorded (the store is down, or its disk full) leaves the entry
    /// claimed. A delivery is then remembered by this process: the next pass records it before
    /// it claims anything, and an attempt of the same entry (its lease ran out, or the uploader
    /// repeated its request) records it instead of sending it again. Only a restart in between
    /// makes the entry go out again, once its lease runs out, which receivers must tolerate
    /// anyway (they deduplicate); so does a failure that cannot be recorded. Nothing is lost.
    ///
    /// - Returns: What the attempt came to (a synchronous caller relays it).
    public func attempt(_ entry: OutboxEntry) async -> OutboxOutcome {
        let outcome: OutboxOutcome
        if let earlier = unrecorded.delivery(of: entry.id) {
            outcome = earlier  // sent and acknowledged before; only its record is missing
        } else {
            metrics.attempts?.increment()
            outcome = await sender.send(entry)
        }
        var delivery = entry.delivery
        let event: OutboxDelivery.Event
        switch outcome {
        case .delivered: event = .succeeded(owner: owner)
        case .failed:
            metrics.failures?.increment()
            event = .failed(owner: owner, now: clock.unixSeconds)
        case .abandoned:
            metrics.failures?.increment()
            event = .abandoned(owner: owner)
        }
        guard case .record = delivery.handle(event, schedule: schedule(entry), jitter: jitter()) else {
            logger.error("\(label): attempted an entry this worker does not hold", ["outboxId": .int(entry.id)])
            return outcome
        }
        do {
            if try await store.record(entry.id, claimedBy: owner, as: delivery, outcome: outcome) {
                log(entry, delivery, outcome)
            } else {
                write(.warning, "lease lost before the outcome was recorded", entry, delivery)
            }
            unrecorded.forget(entry.id)
        } catch {
            // A store that refuses writes answers 503s elsewhere; here nothing is lost, so a warning.
            let kept = unrecorded.remember(entry.id, delivery, outcome)
            write(.warning, "cannot record attempt", entry, delivery, [
                ("error", .string("\(error)")),
                ("next", .string(kept ? "recorded later, not sent again" : "attempted again after the lease")),
            ])
        }
        return outcome
    }

    /// The receiver's reply to entry `id` if this worker delivered it but the store refused to
    /// record that (the next pass records it): the entry still shows this worker's claim, yet
    /// its callback went out and must not go out again.
    public func unrecordedReply(of id: Int64) -> String? {
        guard case .delivered(let reply) = unrecorded.delivery(of: id) else { return nil }
        return reply
    }

    /// Records the deliveries whose outcome the store refused earlier; stops at the first one
    /// it still refuses (the next pass tries again).
    private func recordUnrecorded() async {
        for (id, pending) in unrecorded.all() {
            let fields: KeyValuePairs<String, Logger.Value> = ["outboxId": .int(id), "attempt": .int(Int64(pending.delivery.attempts))]
            do {
                if try await store.record(id, claimedBy: owner, as: pending.delivery, outcome: pending.outcome) {
                    logger.info("\(label): delivered earlier, recorded now", fields)
                } else {
                    logger.warning("\(label): lease lost before the outcome was recorded", fields)
                }
                unrecorded.forget(id)
            } catch {
                return
            }
        }
    }

    /// Puts a dead entry back in the queue, due now.
    ///
    /// - Returns: The entry as requeued, `nil` if there is none with `id` or it is not dead.
    public func requeue(_ id: Int64) async throws -> OutboxEntry? {
        let entry = try await store.requeue(id, now: clock.unixSeconds)
        if entry != nil { logger.info("\(label): requeued", ["outboxId": .int(id)]) }
        return entry
    }

    private func log(_ entry: OutboxEntry, _ delivery: OutboxDelivery, _ outcome: OutboxOutcome) {
        switch (outcome, delivery.state) {
        case (.delivered, _):
            write(.info, "delivered", entry, delivery)
        case (.failed(let reason), .pending(let dueAt)):
            write(.warning, "attempt failed, will retry", entry, delivery, [
                ("reason", .string(reason)), ("nextAttemptAt", .int(dueAt)),
            ])
        case (.failed(let reason), _), (.abandoned(let reason), _):
            write(.error, "failed for good", entry, delivery, [("reason", .string(reason))])
        }
    }

    /// One log line about `entry`: its id, the attempt, the service's fields, then `extra`.
    private func write(
        _ level: Logger.Level, _ message: String, _ entry: OutboxEntry, _ delivery: OutboxDelivery,
        _ extra: [(key: String, value: Logger.Value)] = []
    ) {
        logger.log(
            level, "\(label): \(message)", ["outboxId": .int(entry.id), "attempt": .int(Int64(delivery.attempts))],
            more: describe(entry) + extra)
    }
}

/// The deliveries of one process whose outcome its store refused to record, by entry id: the
/// delivery state to record and the receiver's reply. Bounded: past ``limit`` entries a
/// delivery is not remembered and goes out again after its lease, as before.
private final class UnrecordedDeliveries: Sendable {
    static let limit = 10_000
    private let entries = Mutex<[Int64: (delivery: OutboxDelivery, outcome: OutboxOutcome)]>([:])

    /// Remembers a delivered `outcome`; false for a failure (the retry sends it anyway) or when full.
    func remember(_ id: Int64, _ delivery: OutboxDelivery, _ outcome: OutboxOutcome) -> Bool {
        guard case .delivered = outcome else { return false }
        return entries.withLock { entries in
            guard entries[id] != nil || entries.count < Self.limit else { return false }
            entries[id] = (delivery, outcome)
            return true
        }
    }

    /// The remembered delivered outcome of entry `id`.
    func delivery(of id: Int64) -> OutboxOutcome? { entries.withLock { $0[id]?.outcome } }

    /// Every remembered delivery, oldest entry first.
    func all() -> [(Int64, (delivery: OutboxDelivery, outcome: OutboxOutcome))] {
        entries.withLock { $0.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    func forget(_ id: Int64) { _ = entries.withLock { $0.removeValue(forKey: id) } }
}
