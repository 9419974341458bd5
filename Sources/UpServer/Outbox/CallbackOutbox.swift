import Basics
import Outbox
import Synchronization

/// up-server's callback outbox (DESIGN.md "Callbacks never get lost"): the shared `Outbox`
/// machinery — `OutboxDelivery`, an `OutboxStore`, an `OutboxWorker` — with the signed HTTP
/// callback as its sender.
///
/// The request that stores an object enqueues its callback *born claimed* by this process
/// (``message(for:)``, written in the object's transaction) and tries it at once
/// (``attemptNow(_:)``), relaying the answer to the uploader; the background retrier
/// (`OutboxRetrier`) takes over whatever that attempt could not deliver — of any process sharing
/// the index, once a claim's lease has run out. No grace period: the claim says who is trying.
struct CallbackOutbox: Sendable {
    /// The entries (the callback table of the index database).
    let store: any OutboxStore
    /// Claims, sends and records for this process.
    let worker: OutboxWorker
    private let deliverer: any CallbackDelivering
    private let timeoutSeconds: Double
    private let clock: any WallClock
    private let metrics: UpMetrics
    /// Entries this process is attempting right now: a claim of this process's that is not
    /// among them is one whose outcome could not be recorded (a full disk), not a live attempt.
    private let inFlight = InFlight()

    /// Creates the outbox of one process.
    ///
    /// - Parameters:
    ///   - store: The callback entries.
    ///   - deliverer: Sends one callback.
    ///   - settings: Timeout (sizes the lease) and retry schedule.
    ///   - owner: This process's owner id in claims.
    ///   - clock: Leases and retry times are read from it.
    ///   - metrics: Attempts, failures and depth are counted here.
    ///   - logger: Outcomes are logged here.
    init(
        store: any OutboxStore, deliverer: any CallbackDelivering, settings: UpServerConfiguration.Callback,
        owner: String, clock: any WallClock, metrics: UpMetrics, logger: Logger
    ) {
        self.store = store
        self.deliverer = deliverer
        timeoutSeconds = settings.timeoutSeconds
        self.clock = clock
        self.metrics = metrics
        worker = OutboxWorker(
            owner: owner, store: store, sender: CallbackSender(deliverer: deliverer), schedule: settings.schedule,
            clock: clock,
            metrics: .init(attempts: metrics.callbackAttempts, failures: metrics.callbackFailures, depth: metrics.outboxDepth),
            logger: logger, label: "outbox",
            describe: { entry in
                guard let message = try? CallbackMessage(payload: entry.payload) else { return [] }
                return [("bucket", .string(message.bucket)), ("key", .string(message.key))]
            })
    }

    /// The outbox message for `callback`, born claimed by this process for its immediate attempt.
    func message(for callback: CallbackMessage) -> OutboxMessage {
        callback.message(timeoutSeconds: timeoutSeconds, claimedBy: worker.owner)
    }

    /// The storing request's attempt of `entry` (born claimed by this process, or just claimed by
    /// it), recorded like every later one.
    func attemptNow(_ entry: OutboxEntry) async -> CallbackOutcome {
        inFlight.insert(entry.id)
        defer { inFlight.remove(entry.id) }
        return switch await worker.attempt(entry) {
        case .delivered(let reply): .delivered(reply: Array(reply.utf8))
        case .failed(let reason), .abandoned(let reason): .failed(reason: reason)
        }
    }

    /// The callback outcome for a client that repeated the request which stored an object with
    /// entry `id`, when the first answer is unknown (the first request died, or answered 579):
    /// the entry's own outcome, never a delivery beside it — one callback, however often the
    /// client repeats. Delivered: its reply. Waiting for a retry, or held by a claim whose lease
    /// ran out: claimed now, ahead of schedule, and attempted (recorded like any attempt). Held by
    /// a live claim (another process, or this one, is attempting it): waited for, at most about
    /// one lease. Dead: 579 with its last error (an operator can requeue it).
    ///
    /// - Returns: `nil` if there is no entry `id` (swept).
    func outcomeForRepeat(of id: Int64) async throws -> CallbackOutcome? {
        guard let first = try await store.entry(id: id) else { return nil }
        // Polls 5 times a second for a live claim; its lease bounds any one attempt.
        let polls = Int(first.leaseSeconds + 1) * 5
        for _ in 0...polls {
            guard let entry = try await store.entry(id: id) else { return nil }
            switch entry.delivery.state {
            case .delivered:
                return .delivered(reply: Array((entry.reply ?? "{}").utf8))
            case .dead:
                return .failed(reason: entry.lastError ?? "callback failed")
            case .claimed(let owner, _) where owner == worker.owner && !inFlight.contains(id):
                // This process's own claim with no attempt running: its outcome could not be
                // recorded. It still holds the claim, so it attempts again itself; a delivery
                // the worker remembers is recorded, not sent again.
                return await attemptNow(entry)
            case .pending, .claimed:
                if let claimed = try await store.expedite(id, owner: worker.owner, now: clock.unixSeconds) {
                    return await attemptNow(claimed)
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        return .failed(reason: "callback still being attempted by another process")
    }

    /// A try no outbox entry records: the repeat of a finished upload whose first answer is
    /// unknown and whose callback has no outbox entry to follow (an insert-only upload of
    /// identical content, or a completion recorded before entries were linked); receivers
    /// deduplicate.
    func deliverUnrecorded(_ request: CallbackRequest) async -> CallbackOutcome {
        metrics.callbackAttempts.increment()
        let outcome = await deliverer.deliver(request)
        if case .failed = outcome { metrics.callbackFailures.increment() }
        return outcome
    }
}

/// Sends an outbox entry as the upload callback its payload holds.
struct CallbackSender: OutboxSender {
    let deliverer: any CallbackDelivering

    func send(_ entry: OutboxEntry) async -> OutboxOutcome {
        guard let message = try? CallbackMessage(payload: entry.payload) else {
            return .failed(reason: "outbox entry \(entry.id) does not hold a callback")
        }
        switch await deliverer.deliver(message.request) {
        case .delivered(let reply): return .delivered(reply: String(decoding: reply, as: UTF8.self))
        case .failed(let reason): return .failed(reason: reason)
        }
    }
}

/// The ids of the entries one process is attempting at this moment.
private final class InFlight: Sendable {
    private let ids = Mutex<Set<Int64>>([])

    func insert(_ id: Int64) { _ = ids.withLock { $0.insert(id) } }
    func remove(_ id: Int64) { _ = ids.withLock { $0.remove(id) } }
    func contains(_ id: Int64) -> Bool { ids.withLock { $0.contains(id) } }
}
