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

    /// The storing request's attempt of `entry` (born claimed by this process), recorded like
    /// every later one.
    func attemptNow(_ entry: OutboxEntry) async -> CallbackOutcome {
        switch await worker.attempt(entry) {
        case .delivered(let reply): .delivered(reply: Array(reply.utf8))
        case .failed(let reason), .abandoned(let reason): .failed(reason: reason)
        }
    }

    /// A try no outbox entry records: the repeat of a finished upload whose first answer is
    /// unknown (the entry of the first attempt keeps its own retries; receivers deduplicate).
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
