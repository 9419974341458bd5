import NativeCrypto
import TestSupport
import Testing
import UpServer

@Suite struct BlockHashCacheTests {
    /// Writes a 4 MiB block in uneven chunks through `cache`; returns the blob and its bytes' SHA-1.
    private func upload(
        _ store: any BlockStore, cache: BlockHashCache, seed: UInt64
    ) throws -> (BlobID, [UInt8]) {
        let blob = try store.create()
        var source = ByteSource(seed: seed)
        var expected = Digest(.sha1)
        var offset: Int64 = 0
        for size in [1, 1000, 65_536, 1 << 20, 3_079_191] {
            let bytes = source.next(size)
            expected.update(bytes)
            let at = offset
            offset = try store.append(bytes, to: blob, at: at)
            try cache.update(blob, at: at, with: bytes, store: store)
        }
        #expect(offset == 4 * 1024 * 1024)
        return (blob, expected.finalize())
    }

    @Test func incrementalHashEqualsTheHashOfTheBytes() throws {
        let store = InMemoryBlockStore()
        let cache = BlockHashCache()
        let (blob, expected) = try upload(store, cache: cache, seed: 1)
        #expect(cache.contains(blob))
        #expect(try cache.finalize(blob, length: 4 * 1024 * 1024, store: store) == expected)
        #expect(!cache.contains(blob))
    }

    @Test func hashAfterRebuildEqualsTheIncrementalHash() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileBlockStore(dataDirectory: directory.url)
        let (blob, expected) = try upload(store, cache: BlockHashCache(), seed: 2)
        // A restart: a new cache has never seen the blob and must stream it once.
        let fresh = BlockHashCache()
        #expect(try fresh.finalize(blob, length: 4 * 1024 * 1024, store: store) == expected)
    }

    @Test func anEvictedBlobIsRebuiltOnItsNextChunk() throws {
        let store = InMemoryBlockStore()
        let cache = BlockHashCache(capacity: 1)
        let first = try store.create()
        let second = try store.create()
        var source = ByteSource(seed: 3)
        let a = source.next(300_000)
        _ = try store.append(Array(a[..<100_000]), to: first, at: 0)
        try cache.update(first, at: 0, with: Array(a[..<100_000]), store: store)
        _ = try store.append([1, 2, 3], to: second, at: 0)
        try cache.update(second, at: 0, with: [1, 2, 3], store: store)
        #expect(!cache.contains(first))
        #expect(cache.count == 1)
        _ = try store.append(Array(a[100_000...]), to: first, at: 100_000)
        try cache.update(first, at: 100_000, with: Array(a[100_000...]), store: store)
        #expect(try cache.finalize(first, length: 300_000, store: store) == SHA1.hash(a))
        #expect(try cache.finalize(second, length: 3, store: store) == SHA1.hash([1, 2, 3]))
    }

    @Test func aChunkRewrittenAtAnEarlierOffsetRebuildsFromTheStore() throws {
        let store = InMemoryBlockStore()
        let cache = BlockHashCache()
        let blob = try store.create()
        _ = try store.append([1, 2, 3, 4], to: blob, at: 0)
        try cache.update(blob, at: 0, with: [1, 2, 3, 4], store: store)
        // Only 2 bytes were acknowledged; the retry rewrites from offset 2.
        _ = try store.append([7, 7], to: blob, at: 2)
        try cache.update(blob, at: 2, with: [7, 7], store: store)
        #expect(try cache.finalize(blob, length: 4, store: store) == SHA1.hash([1, 2, 7, 7]))
    }
}
