import Foundation
import Synchronization
import Testing
import TestSupport
@testable import UpServer

/// The orphan sweep (issue 12 §2, §4): store blobs no row names go once older than the grace,
/// and a blob another instance just created, or names while the sweep runs, never does.
@Suite("orphan sweep")
struct OrphanSweepTests {
    @Test func theRuleKeepsKnownAndYoungBlobsAndRemovesOldUnknownOnes() {
        let (known, young, old, atGrace) = (BlobID.random(), BlobID.random(), BlobID.random(), BlobID.random())
        let now = 10_000.0
        let listed = [
            ListedBlob(id: known, modifiedAt: 0),  // ancient, but a row names it
            ListedBlob(id: young, modifiedAt: now - 5),
            ListedBlob(id: old, modifiedAt: now - 3601),
            ListedBlob(id: atGrace, modifiedAt: now - 3600),  // not yet *older* than the grace
            ListedBlob(id: .random(), modifiedAt: .infinity),  // the store gave no time
        ]
        #expect(OrphanRule.orphans(listed: listed, known: [known], now: now, graceSeconds: 3600) == [old])
        #expect(Set(OrphanRule.orphans(listed: listed, known: [], now: now, graceSeconds: 1)) == [known, young, old, atGrace])
    }

    @Test func theSweeperRemovesOnlyOldUnnamedBlobsFromTheTwin() async throws {
        let clock = ManualClock(1_000_000)
        let store = InMemoryBlockStore(clock: clock)
        let index = InMemoryUpIndex()
        let (named, orphan, appendedLately) = (try store.create(), try store.create(), try store.create())
        _ = try await index.createBlock(named, blockSize: 4, expiresAt: 9_000_000, createdAt: 1)
        clock.advance(by: 3000)
        // A block written over time: its age is its newest chunk's.
        _ = try store.append([1, 2], to: appendedLately, at: 0)
        clock.advance(by: 601)
        let young = try store.create()
        let sweeper = Sweeper(index: index, store: store, orphanGraceSeconds: 3600)

        #expect(try await sweeper.sweepOrphans(now: clock.now()) == [orphan])
        #expect(Set(try store.list()) == [named, appendedLately, young])
        clock.advance(by: 3601)
        #expect(Set(try await sweeper.sweepOrphans(now: clock.now())) == [appendedLately, young])
        #expect(try store.list() == [named])
    }

    @Test func aRowThatCommitsWhileTheStoreIsListedKeepsItsBlob() async throws {
        let clock = ManualClock(1_000_000)
        let store = InMemoryBlockStore(clock: clock)
        let rows = RowsOnly()
        let blob = try store.create()
        clock.advance(by: 7200)
        // Another instance names the (old) blob between the sweep's two reads.
        store.afterInventory { rows.name(blob) }
        #expect(try await Sweeper(index: rows, store: store).sweepOrphans(now: clock.now()).isEmpty)
        #expect(try store.list() == [blob])
    }

    @Test func onDiskOnlyFilesOlderThanTheGraceThatNoRowNamesAreDeleted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let index = try SQLiteUpIndex(dataDirectory: directory.url)
        let (named, orphan) = (try store.create(), try store.create())
        let large = [UInt8](repeating: 1, count: FileBlockStore.defaultSmallBlobLimit + 1)  // files, not rows
        _ = try store.append(large, to: orphan, at: 0)
        _ = try store.append(large, to: named, at: 0)
        let orphanRow = try store.create()  // small: a row, not a file
        _ = try store.append(Array("row".utf8), to: orphanRow, at: 0)
        _ = try await index.createBlock(named, blockSize: 4, expiresAt: Int64.max / 2, createdAt: 1)
        try await Task.sleep(for: .milliseconds(2200))
        let young = try store.create()
        _ = try store.append(large, to: young, at: 0)
        let removed = try await Sweeper(index: index, store: store, orphanGraceSeconds: 1)
            .sweepOrphans(now: Date().timeIntervalSince1970)
        #expect(removed == [orphan, orphanRow].sorted())
        #expect(!FileManager.default.fileExists(atPath: store.url(of: orphan).path))
        #expect(throws: BlockStoreError.notFound(orphanRow)) { _ = try store.length(of: orphanRow) }
        #expect(FileManager.default.fileExists(atPath: store.url(of: named).path))
        #expect(FileManager.default.fileExists(atPath: store.url(of: young).path))
    }
}

/// A `SweepIndex` that only knows which blobs rows name (the race test commits one mid-sweep).
private final class RowsOnly: SweepIndex {
    private let named = Mutex<Set<BlobID>>([])
    func name(_ blob: BlobID) { _ = named.withLock { $0.insert(blob) } }
    func sweepExpired(now: Int64) async throws -> SweepPlan { SweepPlan() }
    func knownBlobs() async throws -> Set<BlobID> { named.withLock { $0 } }
    func deleteExpiredObjects(now: Int64, limit: Int) async throws -> ExpiredObjects { ExpiredObjects() }
}
