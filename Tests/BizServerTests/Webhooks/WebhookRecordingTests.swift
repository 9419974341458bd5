import BizServer
import Outbox
import TestSupport
import Testing

/// The `UploadRecordStore` contract for webhook deliveries, against both implementations: a new
/// record and its deliveries are written together, all or nothing; a redelivery writes none.
@Suite struct WebhookRecordingTests {
    static func message(_ record: UploadRecord, lease: Int64 = 20) -> [OutboxMessage] {
        [OutboxMessage(payload: "for \(record.id)", leaseSeconds: lease), OutboxMessage(payload: "second", leaseSeconds: lease)]
    }

    @Test(arguments: StoreKind.allCases)
    func deliveriesAreWrittenWithANewRecordOnly(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let (record, created) = try await store.record(upload(), receivedAt: 1_900_000_000_500, webhooks: { Self.message($0) })
        #expect(created)
        let again = try await store.record(upload(), receivedAt: 1_900_000_009_000, webhooks: { Self.message($0) })
        #expect(!again.created)
        let entries = try await store.webhookDeliveries.list([.pending], before: nil, limit: 10)
        #expect(entries.map(\.payload).sorted() == ["for \(record.id)", "second"])
        #expect(entries.allSatisfy { $0.createdAt == 1_900_000_000 && $0.delivery.state == .pending(dueAt: 1_900_000_000) })
        #expect(try await store.webhookDeliveries.count([.pending, .claimed]) == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aDeliveryThatCannotBeWrittenRollsTheRecordBack(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        await #expect(throws: (any Error).self) {
            _ = try await store.record(upload(), receivedAt: 1000, webhooks: { Self.message($0, lease: 0) })
        }
        #expect(try await store.count() == 0)
        #expect(try await store.webhookDeliveries.depth() == 0)
        #expect(try await store.record(upload(), receivedAt: 2000, webhooks: { Self.message($0) }).created)
    }

    @Test func deliveriesSurviveReopeningTheFile() async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        do {
            let store = try SQLiteUploadRecordStore(path: file.path)
            _ = try await store.record(upload(), receivedAt: 1000, webhooks: { Self.message($0) })
        }
        let reopened = try SQLiteUploadRecordStore(path: file.path)
        #expect(try await reopened.webhookDeliveries.depth() == 2)
    }
}
