import Basics
import HTTPTransport
import Outbox
import Synchronization

/// Sends one webhook delivery (the `OutboxSender` of biz-server's webhook outbox): a POST of the
/// stored event body to its endpoint with the Standard Webhooks headers, signed at send time
/// with the endpoint's secrets as configured now, under the endpoint's timeout, redirects not
/// followed (`CurlTransport` never follows them: a 3xx is a failure).
///
/// A 2xx is delivered. A 410 Gone disables the endpoint (`WebhookEndpointStatus`) and the delivery
/// is dead at once; any other answer, or none, is a failure the schedule retries.
struct WebhookSender: OutboxSender {
    /// The endpoints configured now (a reload may change secrets or schedules).
    let endpoints: @Sendable () -> [WebhookEndpoint]
    let status: WebhookEndpointStatus
    /// nil when libcurl could not start: every attempt fails (and is retried).
    let transport: (any HTTPTransport)?
    let clock: any WallClock
    let metrics: BizMetrics
    let logger: Logger

    /// The largest reply read (the body is not used).
    static let maxReplyBytes = 64 << 10

    func send(_ entry: OutboxEntry) async -> OutboxOutcome {
        let outcome = await attempt(entry)
        let label: String = switch outcome {
        case .delivered: "delivered"
        case .failed: "failed"
        case .abandoned(let reason): reason.hasPrefix("status 410") ? "gone" : "abandoned"
        }
        metrics.webhookDeliveries.increment([label])
        return outcome
    }

    private func attempt(_ entry: OutboxEntry) async -> OutboxOutcome {
        guard let message = try? WebhookMessage(payload: entry.payload) else {
            return .abandoned(reason: "delivery \(entry.id) does not hold a webhook")
        }
        guard let endpoint = endpoints().first(where: { $0.url == message.endpoint }),
            let signer = WebhookSigner(secrets: endpoint.secrets)
        else {
            return .abandoned(reason: "endpoint no longer configured")
        }
        if status.isDisabled(endpoint.url) { return .abandoned(reason: "endpoint disabled after a 410 Gone") }
        let body = Array(message.body.utf8)
        let timestamp = clock.unixSeconds
        let timeout = Duration.milliseconds(Int64((endpoint.timeoutSeconds * 1000).rounded()))
        let request = TransportRequest(
            method: "POST", url: endpoint.url,
            headers: [
                ("Content-Type", "application/json"), ("User-Agent", "upgate-biz-server"),
                ("webhook-id", message.webhookID), ("webhook-timestamp", String(timestamp)),
                ("webhook-signature", signer.signature(id: message.webhookID, timestamp: timestamp, body: body)),
            ],
            body: .bytes(body), timeout: timeout, connectTimeout: timeout, maxResponseBytes: Self.maxReplyBytes)
        guard let transport else { return .failed(reason: "HTTP client unavailable") }
        do {
            let response = try await transport.send(request)
            switch response.status {
            case 200..<300: return .delivered(reply: "status \(response.status)")
            case 410:
                status.disable(endpoint.url)
                metrics.webhookEndpointsDisabled.set(Double(status.disabledCount))
                logger.error(
                    "webhook endpoint disabled: it answered 410 Gone",
                    ["url": .string(WebhookTarget.redacted(endpoint.url)), "webhookId": .string(message.webhookID),
                     "detail": .string("re-queue one of its dead deliveries to enable it again")])
                return .abandoned(reason: "status 410: endpoint disabled")
            default: return .failed(reason: "status \(response.status)")
            }
        } catch let error as TransportError {
            return .failed(reason: error.summary)
        } catch {
            return .failed(reason: "request failed")
        }
    }
}

/// Which endpoints answered 410 Gone and are no longer sent to, by URL. Kept by this process:
/// after a restart an endpoint is tried again once, and a second 410 disables it again. An
/// operator's re-queue of one of its deliveries enables it.
final class WebhookEndpointStatus: Sendable {
    private let disabled = Mutex<Set<String>>([])

    func isDisabled(_ url: String) -> Bool { disabled.withLock { $0.contains(url) } }
    func disable(_ url: String) { _ = disabled.withLock { $0.insert(url) } }
    func enable(_ url: String) { _ = disabled.withLock { $0.remove(url) } }
    var disabledCount: Int { disabled.withLock { $0.count } }
}

/// The endpoints in force, replaced by a configuration reload; read at each attempt.
final class WebhookEndpointList: Sendable {
    private let endpoints: Mutex<[WebhookEndpoint]>

    init(_ endpoints: [WebhookEndpoint]) { self.endpoints = Mutex(endpoints) }

    var current: [WebhookEndpoint] { endpoints.withLock { $0 } }
    func replace(with endpoints: [WebhookEndpoint]) { self.endpoints.withLock { $0 = endpoints } }
}
