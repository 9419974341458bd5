import Foundation
import NativeCrypto
import Synchronization
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
        for blob in blobs { _ = try store.append([1], to: blob, at: 0) }
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
        let store = try FileBlockStore(dataDirectory: directory.url, smallBlobLimit: nil)  // files only
        let first = try store.create()
        _ = try store.append([1], to: first, at: 0)
        try FileManager.default.removeItem(at: store.directory)
        let blobs = try (0..<40).map { _ in try store.create() }  // some share a shard
        for blob in blobs { #expect(try store.append([1, 2], to: blob, at: 0) == 2) }
        #expect(try store.list() == blobs.sorted())
        #expect(throws: BlockStoreError.notFound(first)) { _ = try store.length(of: first) }
    }

    @Test func keysNeverReachTheFileSystem() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url, smallBlobLimit: nil)  // files only
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
            let isRows = parts.count == 2 && parts[0] == "blobs" && parts[1].hasPrefix("inline.sqlite3")
            let isBlob = parts.count == 3 && parts[0] == "blobs" && BlobID(hex: parts[2])?.shard == parts[1]
            #expect(isIndex || isRows || isBlob, "unexpected file \(file)")
        }
        #expect(files.filter { $0.split(separator: "/").count == 3 }.count == keys.count)
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("etc").path))
    }

    @Test func aBlobRemovedWhileItsWriterIsCachedIsNotFound() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Files only: descriptors are what this is about.
        let store = try FileBlockStore(dataDirectory: directory.url, smallBlobLimit: nil)
        let other = try FileBlockStore(dataDirectory: directory.url, smallBlobLimit: nil)
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

    /// A blob of at most `smallBlobLimit` bytes is a row of `blobs/inline.sqlite3`: no file of its
    /// own, and the same bytes from a second store on the same directory, unsynced (every write
    /// to a row is committed). One byte more is a file; so is every blob with no limit.
    @Test func aSmallBlobIsARowThatAnotherStoreReads() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var source = ByteSource(seed: 7)
        let small = source.next(FileBlockStore.defaultSmallBlobLimit)
        let large = source.next(FileBlockStore.defaultSmallBlobLimit + 1)
        let store = try FileBlockStore(dataDirectory: directory.url)
        let (row, file, empty) = (try store.create(), try store.create(), try store.create())
        #expect(try store.append(Array(small[..<1000]), to: row, at: 0) == 1000)
        #expect(try store.append(Array(small[1000...]), to: row, at: 1000) == Int64(small.count))
        #expect(try store.append(large, to: file, at: 0) == Int64(large.count))
        try store.sync(file)
        try store.sync(empty)
        #expect(!FileManager.default.fileExists(atPath: store.url(of: row).path))
        #expect(!FileManager.default.fileExists(atPath: store.url(of: empty).path))
        #expect(FileManager.default.fileExists(atPath: store.url(of: file).path))
        #expect(try store.fileRange(of: row, range: 0..<1) == nil)

        let other = try FileBlockStore(dataDirectory: directory.url)
        #expect(try other.list() == [row, file, empty].sorted())
        #expect(try other.read(row, range: 0..<Int64(small.count)) == small)
        #expect(try other.read(row, range: 5..<9) == Array(small[5..<9]))
        #expect(try other.read(file, range: 0..<Int64(large.count)) == large)
        #expect(try other.length(of: row) == Int64(small.count))
        #expect(try other.length(of: empty) == 0)
        var pieces: [[UInt8]] = []
        try other.forEachChunk(of: row, range: nil, size: 40_000) { pieces.append($0) }
        #expect(pieces.map(\.count) == [40_000, small.count - 40_000] && pieces.joined().elementsEqual(small))
        #expect(throws: BlockStoreError.outOfRange(row, requested: 0..<Int64(small.count + 1), length: Int64(small.count))) {
            _ = try other.read(row, range: 0..<Int64(small.count + 1))
        }
        try other.remove(row)
        #expect(try store.list() == [file, empty].sorted())
        #expect(throws: BlockStoreError.notFound(row)) { _ = try store.length(of: row) }

        let filesOnly = try FileBlockStore(dataDirectory: directory.url, smallBlobLimit: nil)
        let tiny = try filesOnly.create()
        _ = try filesOnly.append([1], to: tiny, at: 0)
        #expect(FileManager.default.fileExists(atPath: filesOnly.url(of: tiny).path))
    }

    /// A row follows the append rules (an unacknowledged tail is cut, missing bytes are an error);
    /// an append that takes it past the limit moves it into a file with the bytes it had, listed
    /// once and read the same by a second store.
    @Test func aRowGrowingPastTheLimitMovesIntoAFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let blob = try store.create()
        #expect(try store.append([1, 2, 3], to: blob, at: 0) == 3)
        #expect(try store.append([9], to: blob, at: 1) == 2)
        #expect(throws: BlockStoreError.missingBytes(blob, expected: 5, actual: 2)) {
            _ = try store.append([7], to: blob, at: 5)
        }
        #expect(!FileManager.default.fileExists(atPath: store.url(of: blob).path))
        var source = ByteSource(seed: 3)
        let large = source.next(FileBlockStore.defaultSmallBlobLimit)
        #expect(try store.append(large, to: blob, at: 2) == Int64(large.count + 2))
        try store.sync(blob)
        #expect(FileManager.default.fileExists(atPath: store.url(of: blob).path))
        let other = try FileBlockStore(dataDirectory: directory.url)
        #expect(try other.read(blob, range: 0..<Int64(large.count + 2)) == [1, 9] + large)
        #expect(try other.inventory().map(\.id) == [blob])
        let fresh = try store.create()
        #expect(throws: BlockStoreError.missingBytes(fresh, expected: 6, actual: 0)) {
            _ = try store.append([7], to: fresh, at: 6)
        }
    }

    /// A move into a file cut short (a power cut before the file's fsync) leaves a file that may be
    /// short beside the row: the row is the blob until the move completes, and the move that
    /// follows writes the file over.
    @Test func aRowIsTheBlobWhileAMoveIntoAFileIsUnfinished() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let blob = try store.create()
        _ = try store.append([1, 2, 3, 4], to: blob, at: 0)
        let file = store.url(of: blob)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data([1, 0]).write(to: file)
        let other = try FileBlockStore(dataDirectory: directory.url)
        #expect(try other.length(of: blob) == 4)
        #expect(try other.read(blob, range: 0..<4) == [1, 2, 3, 4])
        #expect(try other.fileRange(of: blob, range: 0..<4) == nil)
        #expect(try other.inventory().map(\.id) == [blob])
        var source = ByteSource(seed: 5)
        let large = source.next(FileBlockStore.defaultSmallBlobLimit)
        #expect(try other.append(large, to: blob, at: 4) == Int64(large.count + 4))
        try other.sync(blob)
        #expect(try FileBlockStore(dataDirectory: directory.url).read(blob, range: 0..<4) == [1, 2, 3, 4])
        #expect(try Data(contentsOf: file) == Data([1, 2, 3, 4] + large))
    }

    /// A blob named and never written has no file and no row: listed (so the orphan sweep can
    /// forget it) and empty while this store runs, unknown to a new one.
    @Test func anUnwrittenBlobIsOnlyANameInMemory() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let blob = try store.create()
        #expect(try store.length(of: blob) == 0)
        #expect(try store.list() == [blob])
        #expect(!FileManager.default.fileExists(atPath: store.url(of: blob).path))
        let other = try FileBlockStore(dataDirectory: directory.url)
        #expect(try other.list().isEmpty)
        #expect(throws: BlockStoreError.notFound(blob)) { _ = try other.length(of: blob) }
        try store.remove(blob)
        #expect(try store.list().isEmpty)
    }

    /// Rows written at once from many threads share commits, and every one is there for a new
    /// store once its call returned.
    @Test func rowsWrittenAtOnceShareCommitsAndAllStay() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let blobs = try (0..<32).map { _ in try store.create() }
        let group = DispatchGroup()
        let failures = Mutex(0)
        for (index, blob) in blobs.enumerated() {
            group.enter()
            Thread {
                if (try? store.append([UInt8(index)], to: blob, at: 0)) == nil { failures.withLock { $0 += 1 } }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        #expect(store.inlineGroupCommits > 0, "32 writers at once never shared a commit")
        let other = try FileBlockStore(dataDirectory: directory.url)
        for (index, blob) in blobs.enumerated() { #expect(try other.read(blob, range: 0..<1) == [UInt8(index)]) }
    }
}
