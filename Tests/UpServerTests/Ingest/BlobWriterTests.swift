import Foundation
import HTTPKit
import NativeCrypto
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// The one write pipeline: layout, digests in the same pass, the fsync policy, limits, cleanup.
/// Digests are checked against the bytes through independent one-shot functions (`SHA1.hash`,
/// `CRC32.checksum`, `MD5`), never against the pipeline's own running state.
@Suite("BlobWriter")
struct BlobWriterTests {
    let store = InMemoryBlockStore()
    let hashes = BlockHashCache()

    func writer(_ target: BlobTarget, syncEveryChunk: Bool = false) -> BlobWriter {
        BlobIngest(store: store, hashes: hashes, syncEveryChunk: syncEveryChunk).writer(target)
    }

    /// Feeds `bytes` in pieces of `pieceSize` (network-sized pieces, or one big one).
    func feed(_ writer: BlobWriter, _ bytes: [UInt8], pieceSize: Int) async throws -> BlobWritten {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + pieceSize)
            try await writer.write(Array(bytes[start..<end]))
            start = end
        }
        return try await writer.finish()
    }

    static let overflow = UpError(.fileTooLarge)

    @Test(arguments: [1000, 65_536, 300_000, 9 << 20])
    func blocksAreCutAt4MiBWhateverThePieces(pieceSize: Int) async throws {
        let bytes = V1Data.bytes(9 << 20, seed: 4)
        let written = try await feed(
            writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow, crc32: true, etag: true)), bytes,
            pieceSize: pieceSize)
        #expect(written.segments.map(\.length) == [4 << 20, 4 << 20, 1 << 20])
        var stored: [UInt8] = []
        for segment in written.segments {
            stored += try store.read(segment.blob, range: 0..<segment.length)
            #expect(store.syncCount(of: segment.blob) == 1)  // sealed once, before any reply
        }
        #expect(stored == bytes)
        #expect(written.count == Int64(bytes.count))
        #expect(written.crc32 == CRC32.checksum(bytes))
        #expect(written.etag?.etag == Etag.of(bytes))
        #expect(written.head == Array(bytes.prefix(MimeSniffer.windowSize)))
        #expect(written.md5 == nil && written.blockSHA1 == nil)
    }

    /// S3 makes each append a PUT (and the first of a blob a LIST): a store that asks for larger
    /// appends gets them, still cut at every 4 MiB block. Only the first append of each of the
    /// three blobs is a checked one; the rest follow the writer's own (`appendFollowing`, which
    /// the in-memory store verifies: the blob ends where the writer says).
    @Test(arguments: [(BlobWriter.bufferLimit, 36), (1 << 20, 9)])
    func eachAppendCarriesTheStoresAppendSize(appendSize: Int, appends: Int) async throws {
        store.appendSize = appendSize
        let bytes = V1Data.bytes(9 << 20, seed: 7)
        let written = try await feed(
            writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow, crc32: true)), bytes,
            pieceSize: 65_536)
        #expect(store.appendedSizes.count == appends)
        #expect(store.appendedSizes.allSatisfy { $0 <= appendSize })
        #expect(store.followingAppends == appends - 3)
        var stored: [UInt8] = []
        for segment in written.segments { stored += try store.read(segment.blob, range: 0..<segment.length) }
        #expect(stored == bytes)
    }

    @Test func anEmptyFileHasNoBlobButAnEmptyPartHasOne() async throws {
        let file = try await writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow, etag: true)).finish()
        #expect(file.segments.isEmpty && file.etag?.etag == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
        let part = try await writer(BlobTarget(layout: .oneBlob, limit: .max, overflow: Self.overflow, md5: true)).finish()
        #expect(part.segments.map(\.length) == [0])
        #expect(part.md5 == Hex.decode("d41d8cd98f00b204e9800998ecf8427e"))
    }

    /// A v2 part's integrity is its Content-MD5 and etag (§5): no CRC-32 is spent on it.
    @Test func aPartIsOneBlobWithItsMD5AndPartDigestAndNoCRC() async throws {
        let bytes = V1Data.bytes(5 << 20, seed: 8)
        let written = try await feed(
            writer(BlobTarget(layout: .oneBlob, limit: .max, overflow: Self.overflow, md5: true, etag: true)), bytes,
            pieceSize: 70_000)
        #expect(written.segments.map(\.length) == [5 << 20])
        #expect(try store.read(written.segments[0].blob, range: 0..<(5 << 20)) == bytes)
        #expect(store.syncCount(of: written.segments[0].blob) == 1)
        #expect(written.md5 == MD5.hash(bytes))
        #expect(written.etag?.blockDigests == [SHA1.hash(bytes[0..<(4 << 20)]), SHA1.hash(bytes[(4 << 20)...])])
        #expect(written.crc32 == nil)
    }

    @Test(arguments: [false, true])
    func aV1ChunkIsSyncedWhenItCompletesTheBlockAndOtherwiseOnlyWithSyncEveryChunk(syncEveryChunk: Bool) async throws {
        let bytes = V1Data.bytes(600_000, seed: 2)
        let blob = try store.create()
        let first = try await feed(
            writer(.chunk(of: blob, at: 0, blockSize: 600_000, overflow: Self.overflow), syncEveryChunk: syncEveryChunk),
            Array(bytes[0..<400_000]), pieceSize: 50_000)
        #expect(first.blockSHA1 == nil && first.segments.isEmpty)
        #expect(first.crc32 == CRC32.checksum(bytes[0..<400_000]))  // a v1 chunk always has its CRC (§4.1)
        #expect(store.syncCount(of: blob) == (syncEveryChunk ? 1 : 0))  // once, never twice
        let second = try await feed(
            writer(.chunk(of: blob, at: 400_000, blockSize: 600_000, overflow: Self.overflow), syncEveryChunk: syncEveryChunk),
            Array(bytes[400_000...]), pieceSize: 50_000)
        #expect(second.crc32 == CRC32.checksum(bytes[400_000...]))
        #expect(second.blockSHA1 == SHA1.hash(bytes))  // the block's, from the running hash
        #expect(store.syncCount(of: blob) == (syncEveryChunk ? 2 : 1))
        #expect(try store.read(blob, range: 0..<600_000) == bytes)
    }

    /// A chunk's first append is a checked one: it cuts the tail a failed earlier try left past
    /// the acknowledged offset. Only the chunk's later appends follow its own.
    @Test func aV1ChunkCutsAnUnacknowledgedTailBeforeItsOwnAppendsFollow() async throws {
        let bytes = V1Data.bytes(1_000_000, seed: 3)
        let blob = try store.create()
        _ = try store.append(Array(bytes[0..<400_000]) + Array(repeating: 0xEE, count: 100_000), to: blob, at: 0)
        _ = try await feed(
            writer(.chunk(of: blob, at: 400_000, blockSize: 1_000_000, overflow: Self.overflow)),
            Array(bytes[400_000...]), pieceSize: 65_536)
        #expect(store.appendedSizes.count == 4)  // the setup's, then 600,000 bytes in three
        #expect(store.followingAppends == 2)
        #expect(try store.read(blob, range: 0..<1_000_000) == bytes)
    }

    @Test func aBodyPastTheLimitIsRefusedBeforeThePieceIsWritten() async throws {
        let sut = writer(BlobTarget(layout: .blocks, limit: 100, overflow: Self.overflow))
        try await sut.write(Array(repeating: 1, count: 60))
        await #expect(throws: Self.overflow) { try await sut.write(Array(repeating: 2, count: 41)) }
        #expect(await sut.abandon() == nil)
        #expect(try store.list().isEmpty)  // every blob it created is gone
    }

    @Test func aFullDiskMidBodyLeavesNothingOnceAbandoned() async throws {
        store.capacity = Int64(BlobWriter.bufferLimit) + 10
        let sut = writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow))
        await #expect(throws: UpError(.insufficientStorage)) {
            try await sut.writeAll(RequestBodyStream(bytes: V1Data.bytes(3 * BlobWriter.bufferLimit)))
        }
        await sut.abandon()
        #expect(try store.list().isEmpty && store.bytesUsed == 0)
    }

    /// On disk the next buffer is queued while the last one is written. When that write fails,
    /// the queued one must not land where the blob now ends, ahead of the bytes that failed.
    @Test func anAppendQueuedBehindAFailedOneWritesNothing() async throws {
        store.failAppend(2, with: BlockStoreError.io(BlobID.random(), reason: "one write failed"))
        let sut = writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow))
        await #expect(throws: BlockStoreError.self) {
            try await sut.writeAll(RequestBodyStream(bytes: V1Data.bytes(3 * BlobWriter.bufferLimit)))
        }
        #expect(store.appendedSizes == [BlobWriter.bufferLimit])  // the first; the third never ran
        await sut.abandon()
        #expect(try store.list().isEmpty)
    }

    /// A small upload must not pay for 256 KiB buffers (two per body, under hundreds of
    /// concurrent form uploads): a writer told the request's length reserves about that much.
    @Test func aBodyOfDeclaredLengthReservesOnlyWhatItBrings() async throws {
        let bytes = V1Data.bytes(20_000, seed: 5)
        let told = writer(BlobTarget(
            layout: .blocks, limit: .max, overflow: Self.overflow, etag: true, expectedBytes: 20_500))
        #expect(told.reservedBytes >= 20_000 && told.reservedBytes < 32_768)
        let untold = writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow, etag: true))
        #expect(untold.reservedBytes >= BlobWriter.bufferLimit)
        let written = try await feed(told, bytes, pieceSize: 4096)
        #expect(store.appendedSizes == [20_000])
        #expect(try store.read(written.segments[0].blob, range: 0..<20_000) == bytes)
    }

    /// The declared length sizes buffers only: a body longer than it said is still taken whole
    /// (the limit is the rule), cut at 4 MiB as ever.
    @Test func aBodyLongerThanDeclaredIsStillStoredWhole() async throws {
        let bytes = V1Data.bytes(5 << 20, seed: 6)
        let written = try await feed(
            writer(BlobTarget(layout: .blocks, limit: .max, overflow: Self.overflow, etag: true, expectedBytes: 1000)),
            bytes, pieceSize: 65_536)
        #expect(written.segments.map(\.length) == [4 << 20, 1 << 20])
        var stored: [UInt8] = []
        for segment in written.segments { stored += try store.read(segment.blob, range: 0..<segment.length) }
        #expect(stored == bytes && written.etag?.etag == Etag.of(bytes))
        #expect(store.appendedSizes.allSatisfy { $0 <= BlobWriter.bufferLimit })
    }
}
