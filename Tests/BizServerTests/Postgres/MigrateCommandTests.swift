import BizServer
import Foundation
import HTTPKit
import NativePostgres
import Outbox
import ServerShell
import TestSupport
import Testing

/// `biz-server migrate`: an embedded installation's records, keys and webhook deliveries (owed,
/// delivered and dead) end up in PostgreSQL once, however often it runs, and a PostgreSQL-backed
/// server serves them.
@Suite struct MigrateCommandTests {
    /// A data directory as a SQLite-backed server leaves it: 3 records (one with three webhook
    /// deliveries: one delivered, one dead, one still owed), 2 API keys.
    static func embeddedInstallation() async throws -> (directory: String, ids: [String], key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("biz-migrate-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let records = try SQLiteUploadRecordStore(path: directory + "/uploads.sqlite3")
        var ids: [String] = []
        for (index, key) in ["demo/a", "demo/b", "demo/c"].enumerated() {
            let (record, _) = try await records.record(
                upload(client: "demo", key: key, hash: "Fhash\(index)"), receivedAt: 1_900_000_000_000 + Int64(index),
                webhooks: { record in
                    index == 1 ? (1...3).map { OutboxMessage(payload: "{\"id\":\"msg_\(record.id)_\($0)\"}", leaseSeconds: 30) } : []
                })
            ids.append(record.id)
        }
        // The first delivery was acknowledged, the second failed for good; the third is owed.
        let outbox = records.webhookDeliveries
        let claimed = try await outbox.claimDue(owner: "old", now: .max / 2, limit: 2).sorted { $0.id < $1.id }
        for (entry, outcome) in zip(claimed, [OutboxOutcome.delivered(reply: "{\"ok\":true}"), .abandoned(reason: "status 410")]) {
            var delivery = entry.delivery
            let event: OutboxDelivery.Event = outcome.failureReason == nil ? .succeeded(owner: "old") : .abandoned(owner: "old")
            _ = delivery.handle(event, schedule: .init(retryDelays: [1]))
            _ = try await outbox.record(entry.id, claimedBy: "old", as: delivery, outcome: outcome)
        }
        let keys = try SQLiteAPIKeyStore(directory: directory)
        let plain = "upk_migrated-key-0123456789abcdef"
        try await keys.insert(StoredAPIKey(
            id: "key_000000000000000000000001", clientID: "demo", name: "ci",
            keySHA256: BizServerConfiguration.apiKeyHash(plain), createdAt: 1_899_999_000))
        try await keys.insert(StoredAPIKey(
            id: "key_000000000000000000000002", clientID: "demo", keySHA256: BizServerConfiguration.apiKeyHash("other"),
            createdAt: 1_899_999_001, revokedAt: 1_899_999_500))
        return (directory, ids, plain)
    }

    @Test func copiesRecordsKeysAndDeliveriesOnceAndAPostgresServerServesThem() async throws {
        let (directory, ids, plainKey) = try await Self.embeddedInstallation()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try await postgresBizDatabase()

        let first = try await MigrateCommand.copy(from: directory, to: database)
        #expect(first == MigrateCommand.Summary(
            records: 3, recordsSeen: 3, keys: 2, keysSeen: 2, deliveries: 3, deliveriesSeen: 3))
        let again = try await MigrateCommand.copy(from: directory, to: database)
        #expect(again == MigrateCommand.Summary(
            records: 0, recordsSeen: 3, keys: 0, keysSeen: 2, deliveries: 0, deliveriesSeen: 3))
        #expect(again.line.hasPrefix("migrated 0 of 3 upload records, 0 of 2 API keys, 0 of 3 webhook deliveries"))

        // Counted by SQL, not by our stores.
        let counts = try await database.pool.withConnection { connection in
            try ["upload_records", "api_keys", "webhook_deliveries"].map {
                try connection.query("SELECT count(*) FROM \($0)").first?.decode(0, as: Int64.self) ?? -1
            }
        }
        #expect(counts == [3, 2, 3])
        // The history as it was: state, attempts, reply, last error; the owed one due, untried.
        let deliveries = try await database.pool.withConnection { connection in
            try connection.query("SELECT payload, state, attempts, reply, last_error FROM webhook_deliveries ORDER BY id").rows.map {
                [try $0.decode(0, as: String.self), try $0.decode(1, as: String.self), String(try $0.decode(2, as: Int64.self)),
                 try $0.decode(3, as: String?.self) ?? "-", try $0.decode(4, as: String?.self) ?? "-"]
            }
        }
        #expect(deliveries == [
            ["{\"id\":\"msg_\(ids[1])_1\"}", "delivered", "1", "{\"ok\":true}", "-"],
            ["{\"id\":\"msg_\(ids[1])_2\"}", "dead", "1", "-", "status 410"],
            ["{\"id\":\"msg_\(ids[1])_3\"}", "pending", "0", "-", "-"],
        ])

        let harness = BizServerHarness(postgres: database)
        try await harness.server.refreshKeys()
        #expect(await harness.token("{}", apiKey: plainKey).status == 200)
        let listed = try await harness.send(.get, "/v1/uploads", headers: ["Authorization": "Bearer \(plainKey)"]).jsonObject()
        let items = try #require(listed["items"] as? [[String: Any]])
        #expect(items.compactMap { $0["id"] as? String } == ids.reversed())  // same ids, newest first
        let one = await harness.send(.get, "/v1/uploads/\(ids[1])", headers: ["Authorization": "Bearer \(plainKey)"])
        #expect(one.status == 200)
        #expect(try one.jsonObject()["key"] as? String == "demo/b")
    }

    @Test func refusesWithOneLineWithoutADatabase() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("biz-migrate-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(#"{"accessKey": "ak", "secretKey": "sk", "clients": [{"id": "demo", "bucket": "demo"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        let outcome = await MigrateCommand.run(["--config", file], environment: [:])
        #expect(outcome.status == 78)
        #expect(outcome.output.isEmpty)
        #expect(outcome.error.hasPrefix("biz-server migrate: no database configured"))
        #expect(outcome.error.filter { $0 == "\n" }.count == 1)
    }
}
