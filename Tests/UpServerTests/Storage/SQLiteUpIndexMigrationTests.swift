import Foundation
import NativeStore
import Outbox
import Testing
@testable import UpServer

/// Migration 2 (issue 9): the callbacks of an index written before the shared outbox move into
/// `callback_outbox`, nothing lost. Migrations 5 and 6: rows from before read as not sniffed.
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

    /// A block and a part written before migrations 5 and 6 keep every field and read as "not
    /// sniffed" (`sniffedType == nil`), so mkfile and complete read their bytes back as before.
    @Test func blocksAndPartsFromBeforeTheSniffColumnsReadAsNotSniffed() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let path = directory.url.appendingPathComponent("index.sqlite3").path
        let blob = BlobID.random(), partBlob = BlobID.random()
        do {
            let old = try SQLiteDatabase(path: path)
            try old.migrate(Array(SQLiteUpIndex.migrations.prefix(4)))
            try old.run(
                "INSERT INTO blocks (blob, block_size, received, crc32, sha1, expires_at, created_at) VALUES (?, 8, 5, 55, NULL, 500, 100)",
                [.text(blob.hex)])
            try old.run(
                "INSERT INTO uploads (id, bucket, object_key, state, expires_at, created_at) VALUES ('u1', 'demo', NULL, 'active', 900, 100)")
            try old.run(
                """
                INSERT INTO parts (upload_id, part_number, blob, size, md5, etag, digest, put_time)
                VALUES ('u1', 1, ?, 10, 'm', 'e', ?, 150)
                """, [.text(partBlob.hex), .blob([UInt8](repeating: 1, count: 20))])
            old.close()
        }
        let index = try SQLiteUpIndex(path: path)
        #expect(try await index.block(blob) == BlockRecord(
            blob: blob, blockSize: 8, offset: 5, crc32: 55, expiresAt: 500, createdAt: 100, sniffedType: nil))
        let part = try #require(try await index.listParts(uploadID: "u1", marker: 0, max: 1).parts.first)
        #expect(part.blob == partBlob && part.size == 10 && part.sniffedType == nil)
    }
}
