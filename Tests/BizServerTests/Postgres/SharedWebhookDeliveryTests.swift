import Basics
@testable import BizServer
import HTTPTransport
import Outbox
import TestSupport
import Testing

/// Two instances' webhook dispatchers on one PostgreSQL outbox: each delivery is sent once in
/// all; one claimed by an instance that stops is taken over by the other after its lease.
@Suite struct SharedWebhookDeliveryTests {
    struct Instance {
        let database: PostgresBizDatabase
        let transport = RecordingTransport()
        let dispatcher: WebhookDispatcher

        init(_ database: PostgresBizDatabase, clock: ManualClock) {
            self.database = database
            dispatcher = WebhookDispatcher(
                store: database.records.webhookDeliveries, endpoints: [WebhookDispatcherTests.endpoint],
                transport: transport, clock: clock, metrics: BizMetrics(Metrics()), logger: Logger(label: "t", sink: .memory()))
        }
    }

    @Test func eachDeliveryIsSentOnceAndAStoppedInstancesClaimIsTakenOver() async throws {
        let clock = ManualClock(1_900_000_000)
        let first = try await postgresBizDatabase()
        let a = Instance(first, clock: clock)
        let b = Instance(try await postgresBizDatabase(sharing: first), clock: clock)
        for key in ["one", "two"] {
            _ = try await a.database.records.record(
                NewUploadRecord(clientID: "demo", bucket: "b", key: key, hash: "h", fsize: 1),
                receivedAt: Int64(clock.now() * 1000), webhooks: { a.dispatcher.messages(for: $0) })
        }
        // A claims "one" and stops before sending it (its process died mid attempt).
        let claimed = try await first.records.webhookDeliveries.claimDue(owner: a.dispatcher.worker.owner, now: Int64(clock.now()), limit: 1)
        #expect(claimed.count == 1)
        // B sends the other one only: A's claim holds while its lease runs.
        b.transport.enqueue(.response(TransportResponse(status: 204)))
        b.transport.enqueue(.response(TransportResponse(status: 204)))
        #expect(await b.dispatcher.runOnce() == 1)
        #expect(b.transport.requests.count == 1)
        // After the lease B takes "one" over; then nothing is left for either instance.
        clock.advance(by: Double(claimed[0].leaseSeconds) + 1)
        #expect(await b.dispatcher.runOnce() == 1)
        #expect(await a.dispatcher.runOnce() == 0)
        #expect(await b.dispatcher.runOnce() == 0)
        #expect(b.transport.requests.count == 2 && a.transport.requests.isEmpty)
        #expect(Set(b.transport.requests.map(\.url)) == [WebhookDispatcherTests.endpoint.url])
        #expect(try await first.records.webhookDeliveries.count([.delivered]) == 2)
    }
}
