import Basics
import Outbox

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
        switch await worker.attempt(entry) {
        case .delivered(let reply): .delivered(reply: Array(reply.utf8))
        case .failed(let reason), .abandoned(let reason): .failed(reason: reason)
        }
    }

    /// The callback outcome for a client that repeated the request which stored an object with
    /// entry `id`, when the first answer is unknown (the first request died, or answered 579):
    /// the entry's own outcome, never a delivery beside it — one callback, however often the
    /// client repeats. Delivered: its reply. Dead: 579 with its last error (an operator can
    /// requeue it). Waiting for a retry, or held by a claim whose lease ran out: claimed now,
    /// ahead of schedule, and attempted (recorded like any attempt). Held by a live claim: waited
    /// for, at most about one lease — whoever holds it, this process included.
    ///
    /// A live claim of this process's own is an attempt running (the storing request's, or the
    /// retrier's), about to run (the claim is written before the attempt starts), or one whose
    /// outcome the index refused to record (a full disk). Only the last can be told apart, and
    /// only when it was a delivery: the worker remembers those, so its reply is the answer.
    /// Anything else is left to the claim — attempting it here too would send the callback twice
    /// (scripts/chaos/server-crash caught a repeated mkfile doing so beside the retrier).
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
            case .claimed(let owner, _) where owner == worker.owner:
                if let reply = worker.unrecordedReply(of: id) { return .delivered(reply: Array(reply.utf8)) }
                fallthrough
            case .pending, .claimed:
                // Succeeds only for an entry pending, or claimed with the lease run out.
                if let claimed = try await store.expedite(id, owner: worker.owner, now: clock.unixSeconds) {
                    return await attemptNow(claimed)
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        return .failed(reason: "callback still being attempted")
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
