import NativeCrypto
import Synchronization

/// The running SHA-1 of each block being uploaded, so completing a block needs no re-read.
///
/// A block's SHA-1 feeds the etag (qiniu-protocol.md §7.1) and is stored in the index when the
/// block completes. Chunks arrive in order (§4.2), so each chunk's bytes are hashed as they are
/// written. The map is bounded (LRU over `capacity` blobs): a SHA-1 context is ~100 bytes, but
/// abandoned uploads would otherwise keep theirs forever. On a miss — after a restart, an
/// eviction, or an offset the cache has not seen — the state is rebuilt by streaming the blob's
/// first `offset` bytes once (at most one 4 MiB block), which gives the same digest.
///
/// Threads: one lock guards the map only; each entry has its own lock, so hashing a 4 MiB chunk
/// of one block never waits for another block's.
public final class BlockHashCache: Sendable {
    /// A hash in progress. `~Copyable` because `Digest` is: there is exactly one context per entry.
    private struct Running: ~Copyable {
        var digest = Digest(.sha1)
        var offset: Int64 = 0
    }

    private final class Entry: Sendable {
        let running = Mutex(Running())
    }

    private struct Map {
        var entries: [BlobID: (entry: Entry, lastUse: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    /// Most blobs tracked at once.
    public let capacity: Int
    private let map = Mutex(Map())
    private let rebuildChunkSize = 256 * 1024

    /// Creates an empty cache holding at most `capacity` running hashes (default 4096: that
    /// many blocks uploading at once is far beyond one node's bandwidth).
    public init(capacity: Int = 4096) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// Hashes `bytes`, which were just written at `offset` of `blob`.
    ///
    /// - Parameter store: Where the blob's earlier bytes are read from on a miss.
    /// - Throws: `BlockStoreError` from rebuilding.
    public func update(_ blob: BlobID, at offset: Int64, with bytes: [UInt8], store: any BlockStore) throws {
        let entry = self.entry(for: blob)
        try entry.running.withLock { running in
            if running.offset != offset { running = try Self.rebuild(blob, upTo: offset, from: store, rebuildChunkSize) }
            running.digest.update(bytes)
            running.offset += Int64(bytes.count)
        }
    }

    /// The SHA-1 of the first `length` bytes of `blob` (its whole block); forgets the blob.
    ///
    /// - Throws: `BlockStoreError` from rebuilding.
    public func finalize(_ blob: BlobID, length: Int64, store: any BlockStore) throws -> [UInt8] {
        let entry = map.withLock { $0.entries.removeValue(forKey: blob)?.entry } ?? Entry()
        return try entry.running.withLock { running in
            if running.offset != length { running = try Self.rebuild(blob, upTo: length, from: store, rebuildChunkSize) }
            var finished = Running()
            swap(&finished, &running)
            return finished.digest.finalize()
        }
    }

    /// Forgets `blob` (it was removed, or its upload abandoned).
    public func remove(_ blob: BlobID) {
        _ = map.withLock { $0.entries.removeValue(forKey: blob) }
    }

    /// How many blobs have a running hash (tests, metrics).
    public var count: Int { map.withLock { $0.entries.count } }

    /// Whether `blob` has a running hash, i.e. the next update needs no re-read (tests).
    public func contains(_ blob: BlobID) -> Bool { map.withLock { $0.entries[blob] != nil } }

    private func entry(for blob: BlobID) -> Entry {
        map.withLock { map in
            map.tick += 1
            if let found = map.entries[blob] {
                map.entries[blob] = (found.entry, map.tick)
                return found.entry
            }
            if map.entries.count >= capacity,
                let oldest = map.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                // O(capacity) scan, only on insert into a full cache: cheap next to hashing a chunk.
                map.entries.removeValue(forKey: oldest)
            }
            let entry = Entry()
            map.entries[blob] = (entry, map.tick)
            return entry
        }
    }

    private static func rebuild(
        _ blob: BlobID, upTo offset: Int64, from store: any BlockStore, _ chunkSize: Int
    ) throws -> Running {
        var running = Running()
        try store.forEachChunk(of: blob, range: 0..<offset, size: chunkSize) { running.digest.update($0) }
        running.offset = offset
        return running
    }
}
