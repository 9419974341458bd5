import Basics
import Foundation
import HTTPKit
import NativeCrypto
import Outbox
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// Every index role, and the outbox, failing every call with an error no layer knows: what a
/// bug, a corrupt row or a lost database connection looks like to the handlers.
final class BrokenIndex: BlockIndex, ObjectIndex, ObjectCatalog, MultipartIndex, SweepIndex, OutboxStore {
    struct Broken: Error {}

    func createBlock(_: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String??, expiresAt: Int64, createdAt: Int64) async throws -> BlockRecord { throw Broken() }
    func advanceBlock(_: BlobID, from: Int64, to: Int64, crc32: UInt32, sha1: [UInt8]?) async throws -> Bool { throw Broken() }
    func rewindBlock(_: BlobID, from: Int64, to: Int64, crc32: UInt32) async throws -> Bool { throw Broken() }
    func block(_: BlobID) async throws -> BlockRecord? { throw Broken() }
    func putObject(_: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?) async throws -> PutObjectOutcome { throw Broken() }
    func object(bucket: String, key: String) async throws -> StoredObject? { throw Broken() }
    func deleteObject(bucket: String, key: String) async throws -> [BlobID]? { throw Broken() }
    func completion(_: CompletionKey) async throws -> Completion? { throw Broken() }
    func recordCompletionResult(_: CompletionKey, result: String) async throws -> String? { throw Broken() }
    func createUpload(bucket: String, key: String?, expiresAt: Int64, createdAt: Int64) async throws -> MultipartUpload { throw Broken() }
    func upload(id: String) async throws -> MultipartUpload? { throw Broken() }
    func putPart(_: UploadPart, now: Int64) async throws -> BlobID? { throw Broken() }
    func listParts(uploadID: String, marker: Int, max: Int) async throws -> PartListing { throw Broken() }
    func completeUpload(_: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?, now: Int64) async throws -> PutObjectOutcome { throw Broken() }
    func abortUpload(_: String) async throws -> [BlobID] { throw Broken() }
    func retireUpload(_: String, recording: Completion) async throws -> [BlobID] { throw Broken() }
    func sweepExpired(now: Int64) async throws -> SweepPlan { throw Broken() }
    func knownBlobs() async throws -> Set<BlobID> { throw Broken() }
    func deleteExpiredObjects(now: Int64, limit: Int) async throws -> ExpiredObjects { throw Broken() }
    func listObjects(bucket: String, from: String, below: String?, limit: Int) async throws -> [StoredObject] { throw Broken() }
    func copyObject(from: ObjectName, to: ObjectName, mode: PutMode, putTime: Int64?, removeSource: Bool) async throws -> [BlobID]? { throw Broken() }
    func changeObject(_: ObjectName, _: ObjectChange) async throws -> StoredObject? { throw Broken() }
    func enqueue(_: OutboxMessage, now: Int64) async throws -> OutboxEntry { throw Broken() }
    func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry] { throw Broken() }
    func expedite(_: Int64, owner: String, now: Int64) async throws -> OutboxEntry? { throw Broken() }
    func record(_: Int64, claimedBy: String, as: OutboxDelivery, outcome: OutboxOutcome) async throws -> Bool { throw Broken() }
    func requeue(_: Int64, now: Int64) async throws -> OutboxEntry? { throw Broken() }
    func entry(id: Int64) async throws -> OutboxEntry? { throw Broken() }
    func list(_: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry] { throw Broken() }
    func depth() async throws -> Int { throw Broken() }
}

/// Issue 9 §4: one error boundary — the same unexpected failure gives the same documented
/// status and JSON on every route: `599 {"error":"server operation failed"}`, logged once at
/// error level.
@Suite("up-server error boundary")
struct UpErrorBoundaryTests {
    static let secret = "test-context-secret-0123456789"

    @Test func anUnexpectedFailureIs599OnEveryRoute() async throws {
        let logs = LogSink.memory()
        let broken = BrokenIndex()
        let configuration = UpServerConfiguration(
            keys: [UpServerHarness.accessKey: UpServerHarness.secretKey], buckets: [UpServerHarness.bucket],
            contextSecret: Self.secret)
        let clock = ManualClock(1_900_000_000)
        let server = UpServer(
            configuration: configuration,
            stores: UpStores(
                blobs: InMemoryBlockStore(), blocks: broken, uploads: broken, objects: broken, catalog: broken, sweep: broken,
                outbox: broken),
            callbacks: ScriptedCallbacks(), contextSecret: Array(Self.secret.utf8), clock: clock,
            logger: Logger(label: "up-test", sink: logs), metrics: Metrics())
        let mac = HMACSHA1(key: Array(UpServerHarness.secretKey.utf8))
        let token = UpToken.sign(
            PutPolicy(scope: UpServerHarness.bucket, deadline: 1_900_003_600), accessKey: UpServerHarness.accessKey, mac: mac)
        let upToken: HTTPHeaders = ["Authorization": "UpToken \(token)"]
        // A ctx this server would have issued, so bput and mkfile reach the index.
        let ctx = BlockContext(blockID: Array(repeating: 7, count: 16), blockSize: 4, offset: 2, crc32: 0, expiresAt: 1_900_100_000)
            .encode(mac: HMACSHA1(key: Array(Self.secret.utf8)))
        let complete = BlockContext(blockID: Array(repeating: 7, count: 16), blockSize: 4, offset: 4, crc32: 0, expiresAt: 1_900_100_000)
            .encode(mac: HMACSHA1(key: Array(Self.secret.utf8)))
        var form = MultipartBody()
        form.field("token", token)
        form.file(Array("hello".utf8), filename: "h.txt", contentType: "text/plain")
        func qbox(_ target: String) -> HTTPHeaders {
            ["Authorization": QBoxSignature.sign(
                target: target, body: [], contentType: nil, accessKey: UpServerHarness.accessKey, mac: mac)]
        }
        let stat = "/stat/" + EncodedEntryURI.encode(bucket: "demo", key: "k")
        let requests: [(HTTPMethod, String, HTTPHeaders, [UInt8])] = [
            (.post, "/mkblk/4", upToken, [1, 2]),
            (.post, "/bput/\(ctx)/2", upToken, [3, 4]),
            (.post, "/mkfile/4/key/\(URLSafeBase64.encode("k".utf8))", upToken, Array(complete.utf8)),
            (.post, "/put/5/key/\(URLSafeBase64.encode("k".utf8))", upToken, Array("hello".utf8)),
            (.post, "/", form.headers, form.body),
            (.post, MultipartPath(bucket: "demo", key: "k", resource: .uploads).path, upToken, []),
            (.get, stat, qbox(stat), []),
            (.get, "/admin/outbox", qbox("/admin/outbox"), []),
        ]
        for (method, target, headers, body) in requests {
            let response = await server.router.respond(
                to: Request(method: method, target: target, headers: headers, body: body),
                logger: Logger(label: "up-test", sink: logs))
            #expect(response.status == 599, "\(method) \(target): \(response.text)")
            #expect(response.text == #"{"error":"server operation failed"}"#, "\(method) \(target)")
        }
        let failures = logs.capturedLines.filter { $0.contains("\"msg\":\"request failed\"") }
        #expect(failures.count == requests.count, "\(logs.capturedLines)")
        #expect(failures.allSatisfy { $0.contains("\"level\":\"error\"") && $0.contains("Broken") })
        // Health is its own documented row.
        let health = await server.router.respond(
            to: Request(method: .get, target: "/healthz"), logger: Logger(label: "up-test", sink: logs))
        #expect(health.status == 503 && health.text == #"{"error":"index unavailable"}"#)
    }

    @Test func aFullDiskAnywhereIs503AndAWarning() async throws {
        let logs = LogSink.memory()
        let context = RequestContext(requestID: "r", logger: Logger(label: "t", sink: logs), route: "/x")
        let translated = UpErrorBoundary.translate(CocoaError(.fileWriteOutOfSpace), context: context)
        #expect(translated as? UpError == UpError(.insufficientStorage))
        #expect(logs.capturedLines.contains { $0.contains("\"level\":\"warning\"") && $0.contains("disk full") })
        // A client error passes untouched and unlogged: the access log has its status.
        #expect(UpErrorBoundary.translate(UpError(.badToken), context: context) as? UpError == UpError(.badToken))
        #expect(UpErrorBoundary.translate(CancellationError(), context: context) is CancellationError)
        #expect(logs.capturedLines.count == 1)
    }
}

/// Every status up-server sends is a row of the one table (`UpError+HTTP.swift`), including the
/// answers HTTPKit gives before a handler runs.
@Suite("up-server error table")
struct UpErrorTableTests {
    @Test func rowNamesAreUnique() {
        let names = UpError.Code.upServerRows.map(\.name)
        #expect(Set(names).count == names.count)
    }

    @Test func httpKitsOwnAnswersAreRowsOfTheTable() async {
        let harness = UpServerHarness()
        let missing = await harness.send(.get, "/no/such/route")
        #expect(missing.status == UpError.Code.routeNotFound.status && missing.errorText == UpError.Code.routeNotFound.message)
        let wrongMethod = await harness.send(.put, "/mkfile/3")
        #expect(wrongMethod.status == UpError.Code.methodNotAllowed.status)
        #expect(wrongMethod.errorText == UpError.Code.methodNotAllowed.message)
        let tooLarge = await harness.send(.post, "/mkfile/3", body: Array(repeating: 0x61, count: BlocksController.maxMkfileBody + 1))
        #expect(tooLarge.status == UpError.Code.bodyTooLarge.status)
        #expect(tooLarge.errorText?.hasPrefix("request body exceeds") == true)
        #expect(HTTPError.timedOut.status == UpError.Code.handlerTimedOut.status)
        #expect(HTTPError.timedOut.message == UpError.Code.handlerTimedOut.message)
        for status in [missing.status, wrongMethod.status, tooLarge.status] {
            #expect(UpError.Code.upServerRows.contains { $0.status == status })
        }
    }
}
