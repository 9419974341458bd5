import BizServer
import Foundation
import HTTPKit
import NativePostgres
import Outbox
import ServerShell
import TestSupport
import Testing

/// `biz-server migrate`: an embedded installation's records, keys and unsent webhook deliveries
/// end up in PostgreSQL once, however often it runs, and a PostgreSQL-backed server serves them.
@Suite struct MigrateCommandTests {
    /// A data directory as a SQLite-backed server leaves it: 3 records (one with two webhook
    /// deliveries), 2 API keys.
    static func embeddedInstallation() async throws -> (directory: String, ids: [String], key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("biz-migrate-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let records = try SQLiteUploadRecordStore(path: directory + "/uploads.sqlite3")
        var ids: [String] = []
        for (index, key) in ["demo/a", "demo/b", "demo/c"].enumerated() {
            let (record, _) = try await records.record(
                upload(client: "demo", key: key, hash: "Fhash\(index)"), receivedAt: 1_900_000_000_000 + Int64(index),
                webhooks: { record in
                    index == 1 ? [OutboxMessage(payload: "{\"id\":\"msg_\(record.id)_1\"}", leaseSeconds: 30),
                                  OutboxMessage(payload: "{\"id\":\"msg_\(record.id)_2\"}", leaseSeconds: 30)] : []
                })
            ids.append(record.id)
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
            records: 3, recordsSeen: 3, keys: 2, keysSeen: 2, deliveries: 2, deliveriesSeen: 2))
        let again = try await MigrateCommand.copy(from: directory, to: database)
        #expect(again == MigrateCommand.Summary(
            records: 0, recordsSeen: 3, keys: 0, keysSeen: 2, deliveries: 0, deliveriesSeen: 2))
        #expect(again.line.hasPrefix("migrated 0 of 3 upload records, 0 of 2 API keys, 0 of 2 webhook deliveries"))

        // Counted by SQL, not by our stores.
        let counts = try await database.pool.withConnection { connection in
            try ["upload_records", "api_keys", "webhook_deliveries"].map {
                try connection.query("SELECT count(*) FROM \($0)").first?.decode(0, as: Int64.self) ?? -1
            }
        }
        #expect(counts == [3, 2, 2])

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
