import Basics
@testable import BizServer
import Foundation
import HTTPTransport
import NativeCrypto
import Outbox
import TestSupport
import Testing
import UpCore

/// The webhook outbox in process: a new record's deliveries are written with it (never for a
/// redelivery), each attempt carries the Standard Webhooks headers with a stable id, a failure
/// is retried on the endpoint's schedule until dead, a 410 disables the endpoint, a re-queue
/// enables it again. (The wire format is checked by the standardwebhooks oracle in
/// `Tests/Conformance/biz_webhooks.py`.)
@Suite struct WebhookDispatcherTests {
    static let key = Array(repeating: UInt8(9), count: 24)
    static let endpoint = WebhookEndpoint(
        url: "https://app.example/hook", secrets: ["whsec_" + Data(key).base64EncodedString()],
        retryScheduleSeconds: [0, 10, 20])

    struct Fixture {
        let store = InMemoryUploadRecordStore()
        let transport = RecordingTransport()
        let clock = ManualClock(1_900_000_000)
        let metrics = Metrics()
        let dispatcher: WebhookDispatcher

        init(_ endpoints: [WebhookEndpoint] = [WebhookDispatcherTests.endpoint]) {
            dispatcher = WebhookDispatcher(
                store: store.webhookDeliveries, endpoints: endpoints, transport: transport, clock: clock,
                metrics: BizMetrics(metrics), logger: Logger(label: "t", sink: .memory()))
        }

        func record(_ key: String) async throws -> (record: UploadRecord, created: Bool) {
            let dispatcher = self.dispatcher
            return try await store.record(
                NewUploadRecord(clientID: "demo", bucket: "b", key: key, hash: "h", fsize: 1),
                receivedAt: Int64(clock.now() * 1000), webhooks: { dispatcher.messages(for: $0) })
        }

        func reply(_ status: Int) { transport.enqueue(.response(TransportResponse(status: status))) }

        func entries(_ phases: Set<OutboxDelivery.Phase>) async throws -> [OutboxEntry] {
            try await store.webhookDeliveries.list(phases, before: nil, limit: 100)
        }
    }

    @Test func aNewRecordHasOneDeliveryPerEndpointAndARedeliveryNone() async throws {
        let other = WebhookEndpoint(url: "https://other.example/h", secrets: Self.endpoint.secrets)
        let fixture = Fixture([Self.endpoint, other])
        let first = try await fixture.record("a")
        let again = try await fixture.record("a")
        #expect(first.created && !again.created)
        let pending = try await fixture.entries([.pending])
        #expect(pending.count == 2)
        let messages = try pending.map { try WebhookMessage(payload: $0.payload) }
        #expect(Set(messages.map(\.endpoint)) == [Self.endpoint.url, other.url])
        #expect(messages.allSatisfy { $0.webhookID == first.record.id && $0.type == "upload.completed" })
        let event = try JSONValue.parse(Array(messages[0].body.utf8))
        #expect(event["type"]?.stringValue == "upload.completed")
        #expect(try JSONValue.parse(Array(first.record.json.utf8)) == event["data"])
    }

    @Test func anAttemptCarriesTheStandardWebhooksHeaders() async throws {
        let fixture = Fixture()
        let (record, _) = try await fixture.record("a")
        fixture.reply(204)
        #expect(await fixture.dispatcher.runOnce() == 1)
        let request = try #require(fixture.transport.requests.first)
        let headers = Dictionary(request.headers, uniquingKeysWith: { a, _ in a })
        #expect(request.method == "POST" && request.url == Self.endpoint.url)
        #expect(headers["webhook-id"] == record.id)
        #expect(headers["webhook-timestamp"] == "1900000000")
        #expect(headers["Content-Type"] == "application/json")
        guard case .bytes(let body) = request.body else { Issue.record("no body"); return }
        let signed = Array("\(record.id).1900000000.".utf8) + body
        let expected = "v1," + Data(HMAC(.sha256, key: Self.key).authenticationCode(for: signed)).base64EncodedString()
        #expect(headers["webhook-signature"] == expected)
        #expect(try await fixture.entries([.delivered]).count == 1)
        #expect(fixture.metrics.value("upgate_biz_webhook_deliveries_total", ["delivered"]) == 1)
    }

    @Test func failuresFollowTheScheduleUntilDeadWithTheSameID() async throws {
        let fixture = Fixture()
        _ = try await fixture.record("a")
        fixture.reply(500)
        #expect(await fixture.dispatcher.runOnce() == 1)
        let waiting = try #require(try await fixture.entries([.pending]).first)
        guard case .pending(let dueAt) = waiting.delivery.state else { Issue.record("not pending"); return }
        #expect((1_900_000_010...1_900_000_011).contains(dueAt))  // 10 s + up to 10 % jitter
        #expect(waiting.lastError == "status 500")
        #expect(await fixture.dispatcher.runOnce() == 0)  // not due yet
        fixture.clock.advance(by: 11)
        fixture.transport.enqueue(.failure(TransportError(.connect, "refused")))
        #expect(await fixture.dispatcher.runOnce() == 1)
        fixture.clock.advance(by: 22)
        fixture.reply(503)
        #expect(await fixture.dispatcher.runOnce() == 1)
        let dead = try #require(try await fixture.entries([.dead]).first)
        #expect(dead.attempts == 3 && dead.lastError == "status 503")
        let ids = fixture.transport.requests.map { Dictionary($0.headers, uniquingKeysWith: { a, _ in a })["webhook-id"] }
        #expect(ids.count == 3 && Set(ids).count == 1)
        #expect(fixture.metrics.value("upgate_biz_webhook_deliveries_dead") == 1)
        #expect(fixture.metrics.value("upgate_biz_webhook_deliveries_pending") == 0)
        // Re-queued: due now, with a fresh schedule.
        let requeued = try #require(try await fixture.dispatcher.requeue(dead.id))
        #expect(requeued.delivery == OutboxDelivery(state: .pending(dueAt: Int64(fixture.clock.now())), attempts: 0))
        #expect(try await fixture.dispatcher.requeue(dead.id) == nil)
        fixture.reply(200)
        #expect(await fixture.dispatcher.runOnce() == 1)
        #expect(try await fixture.entries([.delivered]).count == 1)
    }

    @Test func a410DisablesTheEndpointUntilARequeue() async throws {
        let fixture = Fixture()
        _ = try await fixture.record("a")
        _ = try await fixture.record("b")
        fixture.reply(410)
        #expect(await fixture.dispatcher.runOnce() == 2)
        #expect(fixture.transport.requests.count == 1)  // b is not sent to a disabled endpoint
        let dead = try await fixture.entries([.dead])
        #expect(dead.count == 2)
        #expect(Set(dead.compactMap(\.lastError)) == ["status 410: endpoint disabled", "endpoint disabled after a 410 Gone"])
        #expect(fixture.metrics.value("upgate_biz_webhook_deliveries_total", ["gone"]) == 1)
        #expect(fixture.metrics.value("upgate_biz_webhook_endpoints_disabled") == 1)
        _ = try await fixture.dispatcher.requeue(dead[0].id)
        #expect(fixture.metrics.value("upgate_biz_webhook_endpoints_disabled") == 0)
        fixture.reply(200)
        #expect(await fixture.dispatcher.runOnce() == 1)
        #expect(try await fixture.entries([.delivered]).count == 1)
    }

    @Test func aDeliveryToARemovedEndpointIsDeadNotRetried() async throws {
        let fixture = Fixture()
        _ = try await fixture.record("a")
        fixture.dispatcher.endpoints.replace(with: [])
        #expect(await fixture.dispatcher.runOnce() == 1)
        #expect(fixture.transport.requests.isEmpty)
        #expect(try await fixture.entries([.dead]).first?.lastError == "endpoint no longer configured")
    }
}
