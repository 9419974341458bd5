import Outbox

/// One `webhooks[]` entry of the configuration: where biz-server tells the app about uploads,
/// signed as Standard Webhooks 1.0 (issue 11 §2). The URL is the endpoint's identity (deliveries
/// name it; two entries with one URL are refused).
public struct WebhookEndpoint: Sendable, Equatable {
    /// The receiver, `https://…` (or `http://…`).
    public var url: String
    /// `whsec_<base64>` secrets; every one signs each delivery (rotation with overlap).
    public var secrets: [String]
    /// Event types sent here (``knownEvents``).
    public var events: [String]
    /// Seconds to wait before attempt 1, 2, …: element 0 before the first attempt, element `n`
    /// after attempt `n` failed. One attempt per element; after the last the delivery is dead.
    public var retryScheduleSeconds: [Int64]
    /// Budget of one attempt (connect, send, answer), seconds.
    public var timeoutSeconds: Double
    /// Whether the URL may resolve to a loopback, private or link-local address.
    public var allowPrivateTargets: Bool

    /// The Standard Webhooks schedule: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
    public static let defaultRetrySchedule: [Int64] = [0, 5, 300, 1800, 7200, 18000, 36000, 36000]
    /// 15 s.
    public static let defaultTimeoutSeconds = 15.0
    /// The event types biz-server sends.
    public static let knownEvents = ["upload.completed"]
    /// The event type of `POST /v1/admin/webhooks/test`, sent to whatever `events` says.
    public static let testEvent = "webhook.test"
    /// Largest share of a retry delay added as jitter.
    static let jitterFraction = 0.1

    /// Creates an entry; every parameter but `url` and `secrets` has the documented default.
    public init(
        url: String, secrets: [String], events: [String] = WebhookEndpoint.knownEvents,
        retryScheduleSeconds: [Int64] = WebhookEndpoint.defaultRetrySchedule,
        timeoutSeconds: Double = WebhookEndpoint.defaultTimeoutSeconds, allowPrivateTargets: Bool = false
    ) {
        self.url = url
        self.secrets = secrets
        self.events = events
        self.retryScheduleSeconds = retryScheduleSeconds
        self.timeoutSeconds = timeoutSeconds
        self.allowPrivateTargets = allowPrivateTargets
    }

    /// The retries after the first attempt, as the outbox machine reads them.
    var schedule: OutboxDelivery.Schedule {
        OutboxDelivery.Schedule(retryDelays: Array(retryScheduleSeconds.dropFirst()), jitterFraction: Self.jitterFraction)
    }

    /// How long a claim holds a delivery: one attempt's timeout plus a margin, so a live owner is
    /// never taken over mid-attempt.
    var leaseSeconds: Int64 { Int64(timeoutSeconds.rounded(.up)) + 5 }

    /// Whether uploads are announced here.
    func wants(_ event: String) -> Bool { events.contains(event) }
}
