import Foundation
import NativeCrypto
import Testing
import TestSupport
import UpServer

/// Which implementation a behavioural test runs against; every behaviour must hold for both.
enum IndexKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case inMemory

    var testDescription: String { rawValue }

    func make(_ directory: TemporaryDirectory) throws -> any UpIndex {
        switch self {
        case .sqlite: try SQLiteUpIndex(dataDirectory: directory.url)
        case .inMemory: InMemoryUpIndex()
        }
    }
}

func object(_ key: String, _ blobs: [BlobID], bucket: String = "photos", etag: String = "Fetag") -> StoredObject {
    StoredObject(
        bucket: bucket, key: key, etag: etag, fsize: Int64(blobs.count) * 10, mimeType: "image/jpeg",
        segments: blobs.map { Segment(blob: $0, length: 10) }, metadata: ["x-qn-meta-color": "red"], putTime: 1000,
        deleteAfterDays: 7, fileType: 1)
}

func callback(at time: Int64 = 100, urls: [String] = ["http://biz.local/cb"]) -> NewOutboxEntry {
    NewOutboxEntry(
        urls: urls, host: "biz.local", body: "key=a.jpg", contentType: "application/x-www-form-urlencoded",
        authScheme: "QBox", firstAttemptAt: time)
}

@Suite struct UpIndexTests {
    @Test(arguments: IndexKind.allCases)
    func onlyAnIncompleteBlockAtTheExpectedOffsetRewinds(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        let blob = BlobID.random()
        _ = try await index.createBlock(blob, blockSize: 8, expiresAt: 500, createdAt: 100)
        #expect(try await index.advanceBlock(blob, from: 0, to: 6, crc32: 66, sha1: nil))
        #expect(try await !index.rewindBlock(blob, from: 5, to: 2, crc32: 22))  // not at 5
        #expect(try await !index.rewindBlock(blob, from: 6, to: 6, crc32: 22))  // not backwards
        #expect(try await index.rewindBlock(blob, from: 6, to: 2, crc32: 22))
        let rewound = try #require(try await index.block(blob))
        #expect(rewound.offset == 2 && rewound.crc32 == 22 && rewound.sha1 == nil)
        #expect(try await index.advanceBlock(blob, from: 2, to: 8, crc32: 88, sha1: SHA1.hash([1])))
        #expect(try await !index.rewindBlock(blob, from: 8, to: 2, crc32: 22))  // complete: never
        #expect(try await !index.rewindBlock(BlobID.random(), from: 8, to: 2, crc32: 22))
    }

    /// mkblk's one index write: the row is born holding its first chunk (a full disk between a
    /// create and an advance would otherwise leave an empty row whose blob mkblk removed).
    @Test(arguments: IndexKind.allCases)
    func aBlockCanBeCreatedHoldingItsFirstChunk(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        let partial = BlobID.random()
        let created = try await index.createBlock(
            partial, blockSize: 8, received: 5, crc32: 55, sha1: nil, expiresAt: 500, createdAt: 100)
        #expect(created == BlockRecord(blob: partial, blockSize: 8, offset: 5, crc32: 55, expiresAt: 500, createdAt: 100))
        #expect(try await index.block(partial) == created)
        #expect(try await index.advanceBlock(partial, from: 5, to: 8, crc32: 88, sha1: SHA1.hash([8])))

        let whole = BlobID.random()
        _ = try await index.createBlock(
            whole, blockSize: 4, received: 4, crc32: 44, sha1: SHA1.hash([4]), expiresAt: 500, createdAt: 100)
        #expect(try await index.block(whole)?.isComplete == true)
        // The same rules as an advance from 0: a complete block carries its SHA-1, no other does.
        await #expect(throws: UpIndexError.self) {
            _ = try await index.createBlock(
                BlobID.random(), blockSize: 4, received: 4, crc32: 0, sha1: nil, expiresAt: 500, createdAt: 100)
        }
        await #expect(throws: UpIndexError.self) {
            _ = try await index.createBlock(
                BlobID.random(), blockSize: 4, received: 5, crc32: 0, sha1: nil, expiresAt: 500, createdAt: 100)
        }
    }

    @Test(arguments: IndexKind.allCases)
    func blockAdvanceIsACompareAndSet(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        let blob = BlobID.random()
        let created = try await index.createBlock(blob, blockSize: 8, expiresAt: 500, createdAt: 100)
        #expect(created == BlockRecord(blob: blob, blockSize: 8, expiresAt: 500, createdAt: 100))
        #expect(try await index.advanceBlock(blob, from: 0, to: 4, crc32: 11, sha1: nil))
        // The same chunk again (a retry) finds the offset moved and changes nothing.
        #expect(try await !index.advanceBlock(blob, from: 0, to: 4, crc32: 11, sha1: nil))
        let sha1 = SHA1.hash([UInt8](repeating: 1, count: 8))
        #expect(try await index.advanceBlock(blob, from: 4, to: 8, crc32: 22, sha1: sha1))
        #expect(try await !index.advanceBlock(blob, from: 4, to: 8, crc32: 22, sha1: sha1))
        let block = try #require(try await index.block(blob))
        #expect(block.offset == 8 && block.crc32 == 22 && block.sha1 == sha1 && block.isComplete)
        #expect(try await !index.advanceBlock(BlobID.random(), from: 0, to: 1, crc32: 0, sha1: nil))
        await #expect(throws: UpIndexError.self) { try await index.advanceBlock(blob, from: 8, to: 9, crc32: 0, sha1: nil) }
        let other = BlobID.random()
        _ = try await index.createBlock(other, blockSize: 4, expiresAt: 500, createdAt: 100)
        // Completing without the SHA-1 would leave the etag unknowable.
        await #expect(throws: UpIndexError.self) { try await index.advanceBlock(other, from: 0, to: 4, crc32: 0, sha1: nil) }
        await #expect(throws: UpIndexError.self) {
            try await index.createBlock(.random(), blockSize: 4_194_305, expiresAt: 1, createdAt: 0)
        }
    }

    @Test(arguments: IndexKind.allCases)
    func replacingAnObjectReturnsItsUnreferencedSegments(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        let (a, b, c, shared) = (BlobID.random(), BlobID.random(), BlobID.random(), BlobID.random())
        guard case .stored(let first, let none, nil) = try await index.putObject(
            object("k", [a, shared]), mode: .replace, completion: nil, callback: nil)
        else { Issue.record("not stored"); return }
        #expect(none.isEmpty && first.version == 1)
        #expect(try await index.object(bucket: "photos", key: "k") == first)
        _ = try await index.putObject(object("other", [shared]), mode: .replace, completion: nil, callback: nil)
        // `b` is still a live block row: its ctx may be reused until it expires, so it stays.
        _ = try await index.createBlock(b, blockSize: 10, expiresAt: 500, createdAt: 1)
        guard case .stored(let second, let released, nil) = try await index.putObject(
            object("k", [b, c], etag: "Fnew"), mode: .replace, completion: nil, callback: nil)
        else { Issue.record("not stored"); return }
        #expect(second.version == 2 && second.etag == "Fnew")
        #expect(released == [a])  // `shared` is still in "other"
        guard case .stored(_, let again, nil) = try await index.putObject(
            object("k", [c]), mode: .replace, completion: nil, callback: nil)
        else { Issue.record("not stored"); return }
        #expect(again.isEmpty)  // `b` has its block row, `c` is in the new object
        await #expect(throws: UpIndexError.objectExists) {
            try await index.putObject(object("k", [a]), mode: .insertOnly, completion: nil, callback: nil)
        }
        #expect(try await index.deleteObject(bucket: "photos", key: "k") == [c])
        #expect(try await index.deleteObject(bucket: "photos", key: "k") == nil)
        #expect(try await index.object(bucket: "photos", key: "k") == nil)
    }

    @Test(arguments: IndexKind.allCases)
    func aRepeatedMkfileFindsTheFirstCompletion(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 20, contexts: ["ctx1", "ctx2"])
        #expect(key != CompletionKey.mkfile(bucket: "photos", key: nil, fsize: 20, contexts: ["ctx1", "ctx2"]))
        #expect(key != CompletionKey.mkfile(bucket: "photos", key: "", fsize: 20, contexts: ["ctx1", "ctx2"]))
        #expect(key != CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 21, contexts: ["ctx1", "ctx2"]))
        let blob = BlobID.random()
        let completion = NewCompletion(key: key, expiresAt: 900)
        guard case .stored = try await index.putObject(
            object("k", [blob]), mode: .replace, completion: completion, callback: callback())
        else { Issue.record("not stored"); return }
        #expect(try await index.recordCompletionResult(key, result: #"{"hash":"Fetag","key":"k"}"#)
            == #"{"hash":"Fetag","key":"k"}"#)
        #expect(try await index.recordCompletionResult(key, result: #"{"other":1}"#) == #"{"hash":"Fetag","key":"k"}"#)
        let repeated = try await index.putObject(
            object("k", [blob], etag: "Fchanged"), mode: .replace, completion: completion, callback: callback())
        let expected = Completion(
            key: key, objectKey: "k", etag: "Fetag", result: #"{"hash":"Fetag","key":"k"}"#, expiresAt: 900)
        #expect(repeated == .alreadyCompleted(expected))
        #expect(try await index.completion(key) == expected)
        #expect(try await index.object(bucket: "photos", key: "k")?.etag == "Fetag")
        #expect(try await index.outboxDepth() == 1)  // no second callback
        let unknown = CompletionKey.mkfile(bucket: "photos", key: "z", fsize: 1, contexts: ["c"])
        #expect(try await index.recordCompletionResult(unknown, result: "{}") == nil)
    }

    @Test(arguments: IndexKind.allCases)
    func theOutboxRowIsWrittenWithTheObjectOrNotAtAll(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 10, contexts: ["c"])
        // An outbox row without a URL is refused after the object was written: all rolls back.
        await #expect(throws: (any Error).self) {
            try await index.putObject(
                object("k", [.random()]), mode: .replace, completion: NewCompletion(key: key, expiresAt: 9),
                callback: callback(urls: []))
        }
        #expect(try await index.object(bucket: "photos", key: "k") == nil)
        #expect(try await index.completion(key) == nil)
        #expect(try await index.outboxDepth() == 0)
        #expect(try await index.knownBlobs().isEmpty)

        guard case .stored(let stored, _, let id?) = try await index.putObject(
            object("k", [.random()]), mode: .replace, completion: nil, callback: callback(at: 150))
        else { Issue.record("no outbox row"); return }
        let entry = try #require(try await index.outboxEntry(id: id))
        #expect(entry.bucket == "photos" && entry.key == "k" && entry.etag == stored.etag)
        #expect(entry.request == callback(at: 150))
        #expect(entry.state == .pending && entry.attempts == 0 && entry.nextAttemptAt == 150 && entry.lastError == nil)
    }

    @Test(arguments: IndexKind.allCases)
    func dueCallbacksComeEarliestFirstAndFailuresBackOff(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try kind.make(directory)
        var ids: [Int64] = []
        for (key, time) in [("a", 300), ("b", 100), ("c", 200), ("d", 100), ("e", 900)] {
            guard case .stored(_, _, let id?) = try await index.putObject(
                object(key, [.random()]), mode: .replace, completion: nil, callback: callback(at: Int64(time)))
            else { Issue.record("no outbox row"); return }
            ids.append(id)
        }
        #expect(try await index.dueCallbacks(now: 300, limit: 10).map(\.key) == ["b", "d", "c", "a"])
        #expect(try await index.dueCallbacks(now: 300, limit: 2).map(\.key) == ["b", "d"])
        #expect(try await index.dueCallbacks(now: 300, limit: 0).isEmpty)

        try await index.markAttemptFailed(ids[1], error: "HTTP 503", nextAttemptAt: 400)
        let retried = try #require(try await index.outboxEntry(id: ids[1]))
        #expect(retried.attempts == 1 && retried.lastError == "HTTP 503" && retried.nextAttemptAt == 400)
        #expect(retried.state == .pending)
        #expect(try await index.dueCallbacks(now: 300, limit: 10).map(\.key) == ["d", "c", "a"])
        #expect(try await index.dueCallbacks(now: 400, limit: 10).map(\.key) == ["d", "c", "a", "b"])

        try await index.markDelivered(ids[3], reply: #"{"ok":true}"#)
        try await index.markAttemptFailed(ids[2], error: "gave up", nextAttemptAt: nil)
        #expect(try await index.outboxDepth() == 3)
        #expect(try await index.dueCallbacks(now: 1000, limit: 10).map(\.key) == ["a", "b", "e"])
        let delivered = try await index.listOutbox(state: .delivered, limit: 10)
        #expect(delivered.map(\.key) == ["d"] && delivered[0].reply == #"{"ok":true}"# && delivered[0].attempts == 1)
        #expect(try await index.listOutbox(state: .failed, limit: 10).map(\.key) == ["c"])
        #expect(try await index.listOutbox(state: .pending, limit: 2).map(\.key) == ["e", "b"])  // newest first
        await #expect(throws: UpIndexError.notFound) { try await index.markDelivered(999, reply: "") }
    }
}
