import Basics
import JSONText
import Outbox
import UpCore

/// One webhook delivery as the outbox keeps it (the payload of its `OutboxEntry`, JSON): the
/// endpoint it goes to, its `webhook-id`, and the event body, rendered once so every attempt
/// sends the same bytes. Secrets are never stored: each attempt signs with the secrets the
/// configuration holds for the endpoint then (a rotation applies to pending deliveries too).
struct WebhookMessage: Sendable, Equatable {
    /// The endpoint's URL (its identity in the configuration).
    var endpoint: String
    /// `webhook-id`: the upload record's id for `upload.completed`, so it is the same on every
    /// attempt and a receiver deduplicates by it.
    var webhookID: String
    /// The event type (`upload.completed`, `webhook.test`).
    var type: String
    /// The JSON body sent.
    var body: String

    /// The outbox table in the upload store's database (migration 3 creates it).
    static let table = "webhook_deliveries"

    /// The deliveries `record` causes: one per endpoint that wants `upload.completed`, written in
    /// the record's transaction.
    static func uploadCompleted(_ record: UploadRecord, endpoints: [WebhookEndpoint]) -> [OutboxMessage] {
        let type = "upload.completed"
        let body = event(type: type, timestamp: UploadRecord.rfc3339(milliseconds: record.receivedAt), data: record.json)
        return endpoints.filter { $0.wants(type) }.map { endpoint in
            WebhookMessage(endpoint: endpoint.url, webhookID: record.id, type: type, body: body)
                .outboxMessage(endpoint, claimedBy: nil)
        }
    }

    /// `{"type": …, "timestamp": "<RFC 3339>", "data": <data>}`.
    static func event(type: String, timestamp: String, data: String) -> String {
        "{\"type\":" + JSONText.quoted(type) + ",\"timestamp\":" + JSONText.quoted(timestamp) + ",\"data\":" + data + "}"
    }

    /// The outbox message for `endpoint`: its lease and first delay; born claimed by `owner`
    /// when the caller attempts it at once (the admin test event).
    func outboxMessage(_ endpoint: WebhookEndpoint, claimedBy owner: String?) -> OutboxMessage {
        OutboxMessage(
            payload: encoded(), leaseSeconds: endpoint.leaseSeconds, claimedBy: owner,
            delaySeconds: endpoint.retryScheduleSeconds.first ?? 0)
    }

    /// The payload text: JSON with its members in name order — the text `JSONEncoder` with
    /// sorted keys wrote before, made without Foundation's coders (as `CallbackMessage`'s).
    func encoded() -> String {
        JSONValue.object([
            ("body", .string(body)), ("endpoint", .string(endpoint)), ("type", .string(type)),
            ("webhookID", .string(webhookID)),
        ]).serialized()
    }

    /// The message in an outbox entry's payload: any JSON text with these members, in any order
    /// and spacing (rows written by earlier versions included).
    ///
    /// - Throws: ``DamagedPayload`` for a payload that is not one (a damaged row).
    init(payload: String) throws(DamagedPayload) {
        guard let json = try? JSONValue.parse(payload), let endpoint = json["endpoint"]?.stringValue,
            let webhookID = json["webhookID"]?.stringValue, let type = json["type"]?.stringValue,
            let body = json["body"]?.stringValue
        else { throw DamagedPayload() }
        self.init(endpoint: endpoint, webhookID: webhookID, type: type, body: body)
    }

    /// An outbox payload that does not hold a webhook message.
    struct DamagedPayload: Error, Equatable {}

    init(endpoint: String, webhookID: String, type: String, body: String) {
        self.endpoint = endpoint
        self.webhookID = webhookID
        self.type = type
        self.body = body
    }
}
