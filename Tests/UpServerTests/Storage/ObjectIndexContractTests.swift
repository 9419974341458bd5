import NativeCrypto
import Outbox
import Testing
@testable import UpServer

/// The `ObjectIndex` contract, for every implementation.
@Suite("ObjectIndex contract")
struct ObjectIndexContractTests {
    @Test(arguments: IndexKind.allCases)
    func replacingAnObjectReturnsItsUnreferencedSegments(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
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
        let index = try await kind.make(directory)
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 20, contexts: ["ctx1", "ctx2"])
        #expect(key != CompletionKey.mkfile(bucket: "photos", key: nil, fsize: 20, contexts: ["ctx1", "ctx2"]))
        #expect(key != CompletionKey.mkfile(bucket: "photos", key: "", fsize: 20, contexts: ["ctx1", "ctx2"]))
        #expect(key != CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 21, contexts: ["ctx1", "ctx2"]))
        let blob = BlobID.random()
        let completion = NewCompletion(key: key, expiresAt: 900)
        guard case .stored(_, _, let entry?) = try await index.putObject(
            object("k", [blob]), mode: .replace, completion: completion, callback: callback())
        else { Issue.record("not stored with its callback"); return }
        // The completion names the callback's outbox entry, for a repeat whose answer is unknown.
        #expect(try await index.completion(key)?.outboxID == entry.id)
        #expect(try await index.recordCompletionResult(key, result: #"{"hash":"Fetag","key":"k"}"#)
            == #"{"hash":"Fetag","key":"k"}"#)
        #expect(try await index.recordCompletionResult(key, result: #"{"other":1}"#) == #"{"hash":"Fetag","key":"k"}"#)
        let repeated = try await index.putObject(
            object("k", [blob], etag: "Fchanged"), mode: .replace, completion: completion, callback: callback())
        let expected = Completion(
            key: key, objectKey: "k", etag: "Fetag", result: #"{"hash":"Fetag","key":"k"}"#, expiresAt: 900,
            outboxID: entry.id)
        #expect(repeated == .alreadyCompleted(expected))
        #expect(try await index.completion(key) == expected)
        #expect(try await index.object(bucket: "photos", key: "k")?.etag == "Fetag")
        #expect(try await index.callbackOutbox.depth() == 1)  // no second callback
        let unknown = CompletionKey.mkfile(bucket: "photos", key: "z", fsize: 1, contexts: ["c"])
        #expect(try await index.recordCompletionResult(unknown, result: "{}") == nil)
    }

    @Test(arguments: IndexKind.allCases)
    func theOutboxRowIsWrittenWithTheObjectOrNotAtAll(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 10, contexts: ["c"])
        // An outbox row the table refuses (no lease) is refused after the object was written:
        // all rolls back.
        await #expect(throws: (any Error).self) {
            try await index.putObject(
                object("k", [.random()]), mode: .replace, completion: NewCompletion(key: key, expiresAt: 9),
                callback: callback(lease: 0))
        }
        #expect(try await index.object(bucket: "photos", key: "k") == nil)
        #expect(try await index.completion(key) == nil)
        #expect(try await index.callbackOutbox.depth() == 0)
        #expect(try await index.knownBlobs().isEmpty)

        // Written with its object at the object's putTime, born claimed by the storing process.
        guard case .stored(_, _, let entry?) = try await index.putObject(
            object("k", [.random()]), mode: .replace, completion: nil, callback: callback(key: "k", owner: "me"))
        else { Issue.record("no outbox row"); return }
        #expect(try await index.callbackOutbox.entry(id: entry.id) == entry)
        #expect(entry.delivery == OutboxDelivery(state: .claimed(owner: "me", leaseUntil: 1010), attempts: 1))
        #expect(entry.createdAt == 1000 && entry.lastError == nil && entry.reply == nil)
        let message = try CallbackMessage(payload: entry.payload)
        #expect(message.bucket == "photos" && message.key == "k" && message.etag == "Fetag")
        #expect(message.request.urls == ["http://biz.local/cb"] && message.request.host == "biz.local")
        // Another process takes it over only once the lease has run out.
        #expect(try await index.callbackOutbox.claimDue(owner: "other", now: 1009, limit: 5).isEmpty)
        #expect(try await index.callbackOutbox.claimDue(owner: "other", now: 1010, limit: 5).map(\.id) == [entry.id])
    }
}
