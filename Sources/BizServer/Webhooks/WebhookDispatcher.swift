import Basics
import HTTPTransport
import Outbox

/// biz-server's webhook outbox (issue 11 §2): the shared `Outbox` machinery — `OutboxDelivery`,
/// an `OutboxStore` (the `webhook_deliveries` table of the upload store), an `OutboxWorker` —
/// with ``WebhookSender`` as its sender, run on the server's background loop.
///
/// Deliveries are written by the upload store in the transaction that records the upload
/// (``messages(for:)``), so a recorded upload always has its deliveries, even across a kill -9.
/// The loop claims due ones (and ones whose lease ran out: their owner died mid attempt), one at
/// a time, and records what the machine decides; several biz-servers sharing the store stay apart
/// by the claim.
final class WebhookDispatcher: Sendable {
    /// Pause between passes when nothing was due.
    static let idlePause = Duration.milliseconds(250)
    /// Most attempts per pass.
    static let batchSize = 32

    /// The deliveries.
    let store: any OutboxStore
    /// Claims, sends and records for this process.
    let worker: OutboxWorker
    let status = WebhookEndpointStatus()
    /// The endpoints in force (``reload(_:)`` replaces them).
    let endpoints: WebhookEndpointList
    private let clock: any WallClock
    private let metrics: BizMetrics
    private let logger: Logger

    /// Creates the dispatcher of one process.
    ///
    /// - Parameters:
    ///   - store: The delivery table.
    ///   - endpoints: The configured endpoints.
    ///   - transport: The HTTP client (libcurl in production; nil: every attempt fails).
    ///   - clock: Leases, retry times and `webhook-timestamp` come from it.
    ///   - metrics: Outcomes and the pending/dead gauges.
    ///   - logger: Outcomes are logged here (never a secret, URLs without their query).
    init(
        store: any OutboxStore, endpoints configured: [WebhookEndpoint], transport: (any HTTPTransport)?,
        clock: any WallClock, metrics: BizMetrics, logger: Logger
    ) {
        let list = WebhookEndpointList(configured)
        let endpoints: @Sendable () -> [WebhookEndpoint] = { list.current }
        self.store = store
        self.endpoints = list
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        let status = self.status
        let sender = WebhookSender(
            endpoints: endpoints, status: status, transport: transport, clock: clock, metrics: metrics, logger: logger)
        worker = OutboxWorker(
            owner: OutboxWorker.makeOwnerID(prefix: "biz"), store: store, sender: sender,
            scheduleFor: { entry in
                let url = (try? WebhookMessage(payload: entry.payload))?.endpoint
                return endpoints().first { $0.url == url }?.schedule ?? OutboxDelivery.Schedule(retryDelays: [])
            },
            clock: clock, logger: logger, label: "webhook",
            describe: { entry in
                guard let message = try? WebhookMessage(payload: entry.payload) else { return [] }
                return [("webhookId", .string(message.webhookID)), ("url", .string(WebhookTarget.redacted(message.endpoint)))]
            })
    }

    /// The deliveries a newly recorded upload causes (the upload store writes them with it).
    func messages(for record: UploadRecord) -> [OutboxMessage] {
        WebhookMessage.uploadCompleted(record, endpoints: endpoints.current)
    }

    /// The background loop: passes until cancelled, pausing when nothing was due.
    func run() async {
        while !Task.isCancelled {
            let attempted = await runOnce()
            if attempted == 0 {
                do { try await Task.sleep(for: Self.idlePause) } catch { return }
            }
        }
    }

    /// One pass, then the gauges.
    ///
    /// - Returns: How many deliveries were attempted.
    @discardableResult
    func runOnce() async -> Int {
        let attempted = await worker.runOnce(limit: Self.batchSize)
        await updateGauges()
        return attempted
    }

    /// Sets the pending and dead gauges from the store.
    func updateGauges() async {
        if let pending = try? await store.count([.pending, .claimed]) { metrics.webhooksPending.set(Double(pending)) }
        if let dead = try? await store.count([.dead]) { metrics.webhooksDead.set(Double(dead)) }
    }

    /// Re-queues dead delivery `id` (due now, a fresh schedule) and enables its endpoint again.
    ///
    /// - Returns: The delivery as re-queued; nil when there is none with `id` or it is not dead.
    func requeue(_ id: Int64) async throws -> OutboxEntry? {
        guard let entry = try await worker.requeue(id) else { return nil }
        if let message = try? WebhookMessage(payload: entry.payload) {
            status.enable(message.endpoint)
            metrics.webhookEndpointsDisabled.set(Double(status.disabledCount))
        }
        await updateGauges()
        return entry
    }

    /// Sends a `webhook.test` event to `endpoint` now: a delivery like any other (listed,
    /// retried on its schedule if this attempt fails), born claimed by this process and attempted
    /// at once.
    ///
    /// - Returns: The delivery after that attempt.
    func sendTest(to endpoint: WebhookEndpoint) async throws -> OutboxEntry {
        let now = clock.unixSeconds
        let id = "test_" + RandomID.urlSafe(count: 16)
        let body = WebhookMessage.event(
            type: WebhookEndpoint.testEvent, timestamp: UploadRecord.rfc3339(milliseconds: now * 1000),
            data: "{\"test\":true}")
        let message = WebhookMessage(endpoint: endpoint.url, webhookID: id, type: WebhookEndpoint.testEvent, body: body)
        let entry = try await store.enqueue(message.outboxMessage(endpoint, claimedBy: worker.owner), now: now)
        _ = await worker.attempt(entry)
        await updateGauges()
        return try await store.entry(id: entry.id) ?? entry
    }
}
