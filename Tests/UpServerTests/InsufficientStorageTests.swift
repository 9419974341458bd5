import Basics
import Foundation
import HTTPKit
import NativeCrypto
import NativeStore
import Outbox
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// A full data disk (issue 5, `scripts/chaos/disk-full`): every layer's "no space" — ENOSPC from
/// a blob write, SQLITE_FULL from the index — is answered `503 {"error":"insufficient storage"}`
/// with `Retry-After`, acknowledges nothing, leaves no bytes or rows behind, and the same request
/// succeeds once space returns.
@Suite("insufficient storage")
struct InsufficientStorageTests {
    /// The documented disk-full answer.
    static func expectInsufficientStorage(_ response: Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 503, sourceLocation: sourceLocation)
        #expect(response.text == #"{"error":"insufficient storage"}"#, sourceLocation: sourceLocation)
        #expect(response.headers["Retry-After"] == String(UpError.retryAfterSeconds), sourceLocation: sourceLocation)
    }

    // MARK: Blob store full

    /// Over a real socket, so the chunk arrives in pieces and is appended in several flushes:
    /// the first lands, a later one finds the disk full.
    @Test func bputThatRunsOutOfSpaceMidChunkIsCutBackAndResumesOnceThereIsRoom() async throws {
        let harness = UpServerHarness { $0.port = 0 }
        let port = try harness.server.start()
        let auth = [("Authorization", "UpToken \(harness.token())")]
        let data = V1Data.bytes(2_000_000, seed: 5)
        let first = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/mkblk/\(data.count)", headers: auth, body: Array(data[0..<500_000]))
        }
        let ctx = try #require(first.json["ctx"] as? String)
        let blob = try #require(try harness.blob(of: ctx))
        harness.store.capacity = 500_000 + Int64(BlobWriter.bufferLimit) + 100_000

        let rest = Array(data[500_000...])
        let refused = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/bput/\(ctx)/500000", headers: auth, body: rest)
        }
        #expect(refused.status == 503)
        #expect(refused.text == #"{"error":"insufficient storage"}"#)
        #expect(refused.headers["Retry-After"] == String(UpError.retryAfterSeconds))
        // The flushes that landed are cut back: nothing past the acknowledged offset takes space,
        // and the index did not move.
        #expect(try harness.store.length(of: blob) == 500_000)
        #expect(await harness.index.block(blob)?.offset == 500_000)

        harness.store.capacity = nil
        let resumed = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/bput/\(ctx)/500000", headers: auth, body: rest)
        }
        #expect(resumed.status == 200, "\(resumed.text)")
        #expect(resumed.json["checksum"] as? String == URLSafeBase64.encode(SHA1.hash(data)))
        #expect(try harness.store.read(blob, range: 0..<Int64(data.count)) == data)
        await harness.server.shutdown()
    }

    @Test func mkblkOnAFullDiskLeavesNoBlobAndNoBlock() async throws {
        let harness = UpServerHarness()
        harness.store.capacity = 1000
        let refused = await harness.mkblk(harness.token(), blockSize: 4000, V1Data.bytes(4000))
        Self.expectInsufficientStorage(refused)
        #expect(try harness.store.list().isEmpty)

        harness.store.capacity = nil
        let stored = await harness.mkblk(harness.token(), blockSize: 4000, V1Data.bytes(4000))
        #expect(stored.status == 200)
    }

    @Test func formUploadOnAFullDiskStoresNothing() async throws {
        let harness = UpServerHarness()
        harness.store.capacity = 100
        let file = FormUploadControllerTests.pattern(count: 5000)
        let form = FormUploadControllerTests.form(token: harness.token(), fields: [("key", "full.bin")], file: file)
        Self.expectInsufficientStorage(await FormUploadControllerTests.post(harness, form))
        #expect(try harness.store.list().isEmpty)
        #expect(await harness.index.object(bucket: UpServerHarness.bucket, key: "full.bin") == nil)

        harness.store.capacity = nil
        #expect(await FormUploadControllerTests.post(harness, form).status == 200)
        #expect(try await harness.content(key: "full.bin") == file)
    }

    @Test func v2PartOnAFullDiskIsNotRecordedAndCanBeSentAgain() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "parts.bin")
        let id = await client.start()
        let part = MultipartPayload.split(MultipartPayload.nineMiB, mebibytes: [2])[0].bytes
        harness.store.capacity = Int64(BlobWriter.bufferLimit + 10)  // the first write fits, the second does not
        Self.expectInsufficientStorage(await client.put(id, 1, part))
        #expect(try harness.store.list().isEmpty)
        let listed = await client.list(id)
        #expect(listed.status == 200)
        #expect((listed.json["parts"] as? [Any] ?? []).isEmpty)

        harness.store.capacity = nil
        let stored = await client.put(id, 1, part)
        #expect(stored.status == 200)
        #expect(await client.complete(id, etags: [1: stored.json["etag"] as? String ?? ""]).status == 200)
        #expect(try await harness.content(key: "parts.bin") == part)
    }

    // MARK: Index full

    @Test func aFullIndexAnswers503AndKeepsNoHalfBlock() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (server, index, store) = try Self.sqliteServer(in: directory)
        let send = Self.sender(server)
        // Room for nothing more: the next row makes SQLite answer SQLITE_FULL.
        let pages = try await index.perform { try $0.query("PRAGMA page_count")[0].integer(0) }
        try await index.perform { try $0.execute("PRAGMA max_page_count = \(pages)") }
        let inits = (0..<2000).map { _ in MultipartPath(bucket: UpServerHarness.bucket, key: nil, resource: .uploads).path }
        var refused: Response?
        for target in inits {
            let response = await send(.post, target, [])
            if response.status != 200 {
                refused = response
                break
            }
        }
        Self.expectInsufficientStorage(try #require(refused))

        // mkblk until the blocks table has no room either: each refused one wrote its bytes
        // first, then had its row refused — neither may stay behind.
        let block = V1Data.bytes(5000)
        var accepted = 0
        var refusedBlock: Response?
        for _ in 0..<1000 {
            let response = await send(.post, "/mkblk/5000", block)
            guard response.status == 200 else {
                refusedBlock = response
                break
            }
            accepted += 1
        }
        Self.expectInsufficientStorage(try #require(refusedBlock))
        #expect(try store.list().count == accepted)
        let rows = try await index.perform { try $0.query("SELECT count(*), min(received) FROM blocks")[0] }
        #expect(try rows.integer(0) == Int64(accepted))
        if accepted > 0 { #expect(try rows.integer(1) == 5000) }
        #expect(try await index.perform { try $0.query("PRAGMA integrity_check")[0].text(0) } == "ok")

        try await index.perform { try $0.execute("PRAGMA max_page_count = 1073741823") }
        #expect(await send(.post, "/mkblk/5000", block).status == 200)
        #expect(await send(.post, inits[0], []).status == 200)
        #expect(try store.list().count == accepted + 1)
    }

    @Test func sqliteFullIsTheOneStorageError() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try SQLiteUpIndex(dataDirectory: directory.url)
        let pages = try await index.perform { try $0.query("PRAGMA page_count")[0].integer(0) }
        try await index.perform { try $0.execute("PRAGMA max_page_count = \(pages)") }
        await #expect(throws: UpError(.insufficientStorage)) {
            for number in 0..<200 {
                _ = try await index.createUpload(bucket: "demo", key: "k\(number)", expiresAt: 2, createdAt: 1)
            }
        }
    }

    // MARK: After the commit

    /// The object and its outbox entry are committed, the callback delivered, then marking it
    /// delivered finds the disk full: the upload succeeded and must be answered so. (Found by the
    /// suite: the v2 client got 503, retried complete, got 612 and uploaded every part again.)
    @Test func v2CompleteIsAnsweredOnceTheObjectIsStoredAndRepeatsItsAnswer() async throws {
        let (server, index, _, callbacks) = Self.fullDiskServer()
        let send = Self.sender(server, callbackUrl: "http://biz.local/cb")
        let key = MultipartPath(bucket: UpServerHarness.bucket, key: "after-commit.bin", resource: .uploads)
        let id = try #require((await send(.post, key.path, [])).json["uploadId"] as? String)
        var path = key
        path.resource = .part(uploadID: id, partNumber: 1)
        let part = V1Data.bytes(70_000)
        let etag = try #require((await send(.put, path.path, part)).json["etag"] as? String)
        index.refuse([.recordOutcome])
        path.resource = .upload(id: id)
        let body = Array(#"{"parts":[{"partNumber":1,"etag":"\#(etag)"}]}"#.utf8)

        let first = await send(.post, path.path, body)
        #expect(first.status == 200)
        #expect(first.text == #"{"ok":true}"#)
        #expect(index.refused == 1)
        #expect(await index.base.object(bucket: UpServerHarness.bucket, key: "after-commit.bin")?.fsize == 70_000)
        // Not recorded as delivered: the claim stays, and once its lease runs out the retrier sends
        // it again (the receiver deduplicates).
        #expect(try await index.outbox.list([.claimed], before: nil, limit: 10).count == 1)
        // A client that lost the answer repeats complete: the first answer, not 612.
        let again = await send(.post, path.path, body)
        #expect(again.status == 200)
        #expect(again.text == #"{"ok":true}"#)
        #expect(callbacks.sent.count == 1)
    }

    @Test func formAndMkfileAreAnsweredOnceTheObjectIsStored() async throws {
        let (server, index, _, callbacks) = Self.fullDiskServer()
        let send = Self.sender(server, callbackUrl: "http://biz.local/cb")
        index.refuse([.recordOutcome, .recordCompletionResult])

        let ctx = try #require((await send(.post, "/mkblk/3000", V1Data.bytes(3000))).json["ctx"] as? String)
        let made = await send(.post, V1Paths.mkfile(3000, key: "mk.bin"), Array(ctx.utf8))
        #expect(made.status == 200)
        #expect(made.text == #"{"ok":true}"#)
        // No first result was recorded, nor the delivery: a repeated mkfile answers with the
        // reply this process remembers, and does not send the callback again.
        let repeated = await send(.post, V1Paths.mkfile(3000, key: "mk.bin"), Array(ctx.utf8))
        #expect(repeated.status == 200)
        #expect(repeated.text == #"{"ok":true}"#)
        #expect(callbacks.sent.count == 1)

        callbacks.script(.failed(reason: "biz down"))
        index.refuse([.recordOutcome])
        let form = FormUploadControllerTests.form(
            token: Self.token(callbackUrl: "http://biz.local/cb"), fields: [("key", "form.bin")])
        let stored = await server.router.respond(
            to: Request(method: .post, target: "/", headers: form.headers, body: form.body),
            logger: Logger(label: "up-test", sink: LogSink.memory()))
        #expect(stored.status == 579)  // stored, callback failed: the outbox retries it
        #expect(await index.base.object(bucket: UpServerHarness.bucket, key: "form.bin") != nil)
        // mkfile: outcome + result; its repeat: result; the form: outcome.
        #expect(index.refused == 4)
    }

    // MARK: File system

    /// The real ENOSPC, from `/dev/full` standing in for a blob's file.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func fileBlockStoreTurnsENOSPCIntoInsufficientStorage() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try FileBlockStore(dataDirectory: directory.url)
        let blob = try first.create()
        // A file (a blob past the small-blob limit), made at its first write.
        _ = try first.append([UInt8](repeating: 0, count: FileBlockStore.defaultSmallBlobLimit + 1), to: blob, at: 0)
        let store = try FileBlockStore(dataDirectory: directory.url)  // no cached descriptor
        let file = store.url(of: blob)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/dev/full")
        #expect(throws: UpError(.insufficientStorage)) { _ = try store.append([1, 2, 3], to: blob, at: 0) }
    }

    @Test func noSpaceIsRecognisedThroughEveryWrapper() {
        #expect(InsufficientStorage.isNoSpace(SQLiteError(code: SQLiteError.full)))
        #expect(InsufficientStorage.isNoSpace(CocoaError(.fileWriteOutOfSpace)))
        #expect(InsufficientStorage.isNoSpace(NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))))
        let wrapped = NSError(
            domain: NSCocoaErrorDomain, code: CocoaError.fileWriteUnknown.rawValue,
            userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))])
        #expect(InsufficientStorage.isNoSpace(wrapped))
        #expect(!InsufficientStorage.isNoSpace(BlockStoreError.io(nil, reason: "EIO")))
    }

    // MARK: Helpers

    private static func sqliteServer(in directory: TemporaryDirectory) throws -> (UpServer, SQLiteUpIndex, InMemoryBlockStore) {
        let configuration = UpServerConfiguration(
            host: "127.0.0.1", port: 9000, keys: [UpServerHarness.accessKey: UpServerHarness.secretKey],
            buckets: [UpServerHarness.bucket], contextSecret: "test-context-secret-0123456789", threads: 2)
        let index = try SQLiteUpIndex(dataDirectory: directory.url)
        let store = InMemoryBlockStore()
        let server = UpServer(
            configuration: configuration, stores: UpStores(blobs: store, index: index, outbox: index.outbox),
            callbacks: ScriptedCallbacks(),
            contextSecret: Array("test-context-secret-0123456789".utf8), clock: ManualClock(1_900_000_000),
            logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
        return (server, index, store)
    }

    private static func fullDiskServer() -> (UpServer, FullDiskIndex, InMemoryBlockStore, ScriptedCallbacks) {
        let configuration = UpServerConfiguration(
            host: "127.0.0.1", port: 9000, keys: [UpServerHarness.accessKey: UpServerHarness.secretKey],
            buckets: [UpServerHarness.bucket], contextSecret: "test-context-secret-0123456789", threads: 2)
        let index = FullDiskIndex()
        let store = InMemoryBlockStore()
        let callbacks = ScriptedCallbacks()
        let server = UpServer(
            configuration: configuration, stores: index.stores(blobs: store), callbacks: callbacks,
            contextSecret: Array("test-context-secret-0123456789".utf8), clock: ManualClock(1_900_000_000),
            logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
        return (server, index, store, callbacks)
    }

    private static func token(callbackUrl: String? = nil) -> String {
        var policy = PutPolicy(scope: UpServerHarness.bucket, deadline: 1_900_003_600)
        if let callbackUrl {
            policy.callbackUrl = callbackUrl
            policy.callbackBody = "key=$(key)&hash=$(etag)"
        }
        return UpToken.sign(policy, accessKey: UpServerHarness.accessKey, mac: HMACSHA1(key: Array(UpServerHarness.secretKey.utf8)))
    }

    private static func sender(
        _ server: UpServer, callbackUrl: String? = nil
    ) -> @Sendable (HTTPMethod, String, [UInt8]) async -> Response {
        let token = Self.token(callbackUrl: callbackUrl)
        return { method, target, body in
            await server.router.respond(
                to: Request(method: method, target: target, headers: ["Authorization": "UpToken \(token)"], body: body),
                logger: Logger(label: "up-test", sink: LogSink.memory()))
        }
    }
}
