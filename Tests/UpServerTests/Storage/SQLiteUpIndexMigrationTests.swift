import Foundation
import NativeStore
import Outbox
import Testing
@testable import UpServer

/// Migration 2 (issue 9): the callbacks of an index written before the shared outbox move into
/// `callback_outbox`, nothing lost.
@Suite("SQLiteUpIndex migrations")
struct SQLiteUpIndexMigrationTests {
    @Test func theOldOutboxMovesIntoTheSharedOneAndKeepsEveryCallback() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let path = directory.url.appendingPathComponent("index.sqlite3").path
        do {
            // An index as the previous release left it: schema 1, four callbacks in every state.
            let old = try SQLiteDatabase(path: path)
            try old.migrate([SQLiteUpIndex.schemaV1])
            let insert = """
                INSERT INTO outbox (id, bucket, object_key, etag, urls, host, body, content_type, auth_scheme,
                                    first_attempt_at, attempts, next_attempt_at, last_error, state, reply)
                VALUES (?, 'demo', ?, 'Fh', ?, ?, 'key=k', 'application/x-www-form-urlencoded', 'qbox:ak', 100, ?, ?, ?, ?, ?)
                """
            try old.run(insert, [1, "fresh", #"["http://a/cb"]"#, .null, 0, 100, .null, "pending", .null])
            try old.run(insert, [2, "retry", #"["http://a/cb","http://b/cb"]"#, "biz.local", 2, 400, "status 503", "pending", .null])
            try old.run(insert, [3, "gave-up", #"["http://a/cb"]"#, .null, 13, 900, "timeout", "failed", .null])
            try old.run(insert, [4, "done", #"["http://a/cb"]"#, .null, 1, 100, .null, "delivered", #"{"ok":1}"#])
            old.close()
        }
        let index = try SQLiteUpIndex(path: path)
        let outbox = index.outbox
        let fresh = try #require(try await outbox.entry(id: 1))
        #expect(fresh.delivery == OutboxDelivery(state: .pending(dueAt: 100), attempts: 0))
        #expect(fresh.leaseSeconds == 10 && fresh.createdAt == 100)
        #expect(try CallbackMessage(payload: fresh.payload) == CallbackMessage(
            bucket: "demo", key: "fresh", etag: "Fh",
            request: CallbackRequest(
                urls: ["http://a/cb"], body: "key=k", contentType: "application/x-www-form-urlencoded",
                authScheme: "qbox:ak")))
        let retry = try #require(try await outbox.entry(id: 2))
        #expect(retry.delivery == OutboxDelivery(state: .pending(dueAt: 400), attempts: 2))
        #expect(retry.lastError == "status 503" && retry.leaseSeconds == 15)
        #expect(try CallbackMessage(payload: retry.payload).request.host == "biz.local")
        let dead = try #require(try await outbox.entry(id: 3))
        #expect(dead.delivery == OutboxDelivery(state: .dead, attempts: 13) && dead.lastError == "timeout")
        let done = try #require(try await outbox.entry(id: 4))
        #expect(done.delivery == OutboxDelivery(state: .delivered, attempts: 1) && done.reply == #"{"ok":1}"#)
        #expect(try await outbox.depth() == 2)
        // New entries continue the sequence; the old table is gone.
        let next = try await outbox.enqueue(OutboxMessage(payload: "{}", leaseSeconds: 5), now: 1000)
        #expect(next.id == 5)
        let tables = try await index.perform { try $0.query("SELECT name FROM sqlite_master WHERE name = 'outbox'") }
        #expect(tables.isEmpty)
    }
}
