import Foundation
import NativeCrypto
import Testing
import UpServer

/// `FileBlockStore` beyond the `BlockStore` contract (`BlockStoreContractTests`): files, shards,
/// reopening, memory.
@Suite(.serialized) struct FileBlockStoreTests {
    @Test func streamsSixteenMebibytesInPiecesWithoutHoldingTheBlob() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let blob = try store.create()
        let piece = 64 * 1024
        let canMeasure = PeakMemory.reset()
        let before = PeakMemory.resident() ?? 0

        var source = ByteSource(seed: 42)
        var expected = Digest(.sha1)
        var offset: Int64 = 0
        for _ in 0..<256 {
            let bytes = source.next(piece)
            expected.update(bytes)
            offset = try store.append(bytes, to: blob, at: offset)
        }
        try store.sync(blob)
        #expect(offset == 16 * 1024 * 1024)
        #expect(try store.length(of: blob) == offset)

        var streamed = Digest(.sha1)
        var largest = 0
        var total = 0
        try store.forEachChunk(of: blob, size: piece) { chunk in
            largest = max(largest, chunk.count)
            total += chunk.count
            streamed.update(chunk)
        }
        #expect(total == 16 * 1024 * 1024)
        #expect(largest == piece)
        let streamedSHA1 = streamed.finalize()
        let expectedSHA1 = expected.finalize()
        #expect(streamedSHA1 == expectedSHA1)
        if canMeasure, let peak = PeakMemory.highWater() {
            // A blob held whole would add ≥ 16 MiB; streaming adds a few 64 KiB buffers.
            #expect(peak - before < 8 * 1024 * 1024, "peak grew by \(peak - before) bytes")
        }
    }

    @Test func blobsSurviveReopeningAndRemoveIsIdempotent() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let blob: BlobID
        do {
            let store = try FileBlockStore(dataDirectory: directory.url)
            blob = try store.create()
            _ = try store.append([9, 8, 7], to: blob, at: 0)
            try store.sync(blob)
        }
        let reopened = try FileBlockStore(dataDirectory: directory.url)
        #expect(try reopened.list() == [blob])
        #expect(try reopened.read(blob, range: 0..<3) == [9, 8, 7])
        try reopened.remove(blob)
        try reopened.remove(blob)
        #expect(try reopened.list().isEmpty)
        #expect(throws: BlockStoreError.notFound(blob)) { _ = try reopened.length(of: blob) }
    }

    @Test func blobsLiveUnderShardDirectoriesAndListIgnoresForeignFiles() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url.appendingPathComponent("deep/er"))
        let blobs = try (0..<5).map { _ in try store.create() }
        try Data("x".utf8).write(to: store.directory.appendingPathComponent("stray.tmp"))
        #expect(try store.list() == blobs.sorted())
        for blob in blobs {
            #expect(store.url(of: blob).path.hasSuffix("/blobs/\(blob.shard)/\(blob.hex)"))
        }
    }

    /// A shard is made when its first blob finds it missing, even if the whole `blobs/`
    /// directory went away under a running store; existing blobs of other shards are untouched.
    @Test func aMissingShardOrBlobsDirectoryIsMadeAgainByTheNextCreate() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let first = try store.create()
        try FileManager.default.removeItem(at: store.directory)
        let blobs = try (0..<40).map { _ in try store.create() }  // some share a shard
        for blob in blobs { #expect(try store.append([1, 2], to: blob, at: 0) == 2) }
        #expect(try store.list() == blobs.sorted())
        #expect(throws: BlockStoreError.notFound(first)) { _ = try store.length(of: first) }
    }

    @Test func keysNeverReachTheFileSystem() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let index = try SQLiteUpIndex(dataDirectory: directory.url)
        let keys = ["../../etc/passwd", "/etc/shadow", "a/../../b", "..", "évil\u{0}name", "dir/"]
        for key in keys {
            let blob = try store.create()
            _ = try store.append(Array(key.utf8), to: blob, at: 0)
            try store.sync(blob)
            let object = StoredObject(
                bucket: "b", key: key, etag: "e", fsize: Int64(key.utf8.count), mimeType: "text/plain",
                segments: [Segment(blob: blob, length: Int64(key.utf8.count))], putTime: 1)
            _ = try await index.putObject(object, mode: .replace, completion: nil, callback: nil)
        }
        let files = directory.files()
        for file in files {
            let parts = file.split(separator: "/").map(String.init)
            let isIndex = parts.count == 1 && parts[0].hasPrefix("index.sqlite3")
            let isBlob = parts.count == 3 && parts[0] == "blobs" && BlobID(hex: parts[2])?.shard == parts[1]
            #expect(isIndex || isBlob, "unexpected file \(file)")
        }
        #expect(files.filter { $0.hasPrefix("blobs/") }.count == keys.count)
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("etc").path))
    }

    @Test func aBlobRemovedWhileItsWriterIsCachedIsNotFound() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let other = try FileBlockStore(dataDirectory: directory.url)
        // Removed by this store: its cached descriptor goes with it.
        let mine = try store.create()
        #expect(try store.append([1, 2], to: mine, at: 0) == 2)
        try store.remove(mine)
        #expect(throws: BlockStoreError.notFound(mine)) { _ = try store.append([3], to: mine, at: 2) }
        #expect(throws: BlockStoreError.notFound(mine)) { try store.sync(mine) }
        // Removed behind this store's back (another instance): the cached descriptor still
        // points at the unlinked file, which must not swallow acknowledged bytes.
        let theirs = try store.create()
        #expect(try store.append([1, 2], to: theirs, at: 0) == 2)
        try other.remove(theirs)
        #expect(throws: BlockStoreError.notFound(theirs)) { _ = try store.append([3], to: theirs, at: 2) }
        // Appends after a sync (which lets the descriptor go) reopen the file.
        let reopened = try store.create()
        #expect(try store.append([1], to: reopened, at: 0) == 1)
        try store.sync(reopened)
        #expect(try store.append([2], to: reopened, at: 1) == 2)
        #expect(try other.read(reopened, range: 0..<2) == [1, 2])
    }
}
