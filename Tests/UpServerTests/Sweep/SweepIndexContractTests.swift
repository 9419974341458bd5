import Foundation
import NativeCrypto
import Outbox
import TestSupport
import Testing
@testable import UpServer

/// The `SweepIndex` contract, for every implementation, and the sweep around it.
@Suite("SweepIndex contract")
struct SweepIndexContractTests {
    @Test(arguments: IndexKind.allCases)
    func sweepingNeverReturnsABlobThatAnObjectReferences(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let (used, abandoned, fresh) = (BlobID.random(), BlobID.random(), BlobID.random())
        for blob in [used, abandoned] { _ = try await index.createBlock(blob, blockSize: 10, expiresAt: 500, createdAt: 1) }
        _ = try await index.createBlock(fresh, blockSize: 10, expiresAt: 900, createdAt: 1)
        _ = try await index.putObject(object("k", [used]), mode: .replace, completion: nil, callback: nil)
        let upload = try await index.createUpload(bucket: "photos", key: nil, expiresAt: 500, createdAt: 1)
        let stale = part(upload.id, 1)
        _ = try await index.putPart(stale, now: 100)
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 10, contexts: ["c"])
        _ = try await index.putObject(
            object("k2", [.random()]), mode: .replace, completion: NewCompletion(key: key, expiresAt: 500), callback: nil)

        #expect(try await index.sweepExpired(now: 499).isEmpty)
        let plan = try await index.sweepExpired(now: 500)
        #expect(Set(plan.blockRows) == [used, abandoned])
        #expect(plan.uploadRows == [upload.id])
        #expect(Set(plan.blobs) == [abandoned, stale.blob])
        #expect(!plan.blobs.contains(used))
        #expect(try await index.block(used) == nil)
        #expect(try await index.block(fresh) != nil)
        #expect(try await index.object(bucket: "photos", key: "k")?.segments.map(\.blob) == [used])
        #expect(try await index.upload(id: upload.id) == nil)
        #expect(try await index.completion(key) == nil)
        #expect(try await index.sweepExpired(now: 500).isEmpty)
        // The object keeps its blob; deleting it is what finally releases it.
        #expect(try await index.deleteObject(bucket: "photos", key: "k") == [used])
    }

    @Test func thePlanIsAPureFunctionOfTimeAndReferences() {
        let (a, b) = (BlobID.random(), BlobID.random())
        let blocks = [
            BlockRecord(blob: a, blockSize: 1, expiresAt: 10, createdAt: 0),
            BlockRecord(blob: b, blockSize: 1, expiresAt: 20, createdAt: 0),
        ]
        #expect(SweepPlan.make(now: 9, blocks: blocks, uploads: [], isReferencedByObject: { _ in false }).isEmpty)
        #expect(SweepPlan.make(now: 10, blocks: blocks, uploads: [], isReferencedByObject: { _ in false })
            == SweepPlan(blockRows: [a], blobs: [a]))
        #expect(SweepPlan.make(now: 30, blocks: blocks, uploads: [], isReferencedByObject: { $0 == a })
            == SweepPlan(blockRows: [a, b].sorted(), blobs: [b]))
    }

    @Test func theSweeperRemovesPlannedBlobsFromTheStore() async throws {
        let store = InMemoryBlockStore()
        let index = InMemoryUpIndex()
        let (kept, swept) = (try store.create(), try store.create())
        for blob in [kept, swept] { _ = try await index.createBlock(blob, blockSize: 1, expiresAt: 5, createdAt: 0) }
        _ = try await index.putObject(object("k", [kept]), mode: .replace, completion: nil, callback: nil)
        let orphan = try store.create()
        try await Sweeper(index: index, store: store).sweep(now: 5)
        #expect(Set(try store.list()) == [kept, orphan])
    }

    @Test func theSQLiteIndexSurvivesReopening() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let blob = BlobID.random()
        let uploadID: String
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 10, contexts: ["c"])
        do {
            let index = try SQLiteUpIndex(dataDirectory: directory.url)
            #expect(try await index.journalMode() == "wal")
            _ = try await index.createBlock(blob, blockSize: 4, expiresAt: 500, createdAt: 1)
            _ = try await index.advanceBlock(blob, from: 0, to: 4, crc32: 7, sha1: SHA1.hash([1, 2, 3, 4]))
            _ = try await index.putObject(
                object("k", [blob]), mode: .replace, completion: NewCompletion(key: key, expiresAt: 500),
                callback: callback())
            uploadID = try await index.createUpload(bucket: "photos", key: "v2", expiresAt: 500, createdAt: 1).id
            _ = try await index.putPart(part(uploadID, 2), now: 10)
        }
        let reopened = try SQLiteUpIndex(dataDirectory: directory.url)
        #expect(try await reopened.block(blob)?.sha1 == SHA1.hash([1, 2, 3, 4]))
        let stored = try #require(try await reopened.object(bucket: "photos", key: "k"))
        #expect(stored == { var o = object("k", [blob]); o.version = 1; return o }())
        #expect(try await reopened.completion(key)?.objectKey == "k")
        #expect(try await reopened.outbox.depth() == 1)
        #expect(try await reopened.upload(id: uploadID)?.state == .active)
        #expect(try await reopened.listParts(uploadID: uploadID, marker: 0, max: 10).parts.map(\.partNumber) == [2])
    }
}
