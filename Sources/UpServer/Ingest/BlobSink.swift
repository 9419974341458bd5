import NativeCrypto
import Synchronization
import UpCore

/// The I/O side of `BlobWriter`: the blobs being written and every running digest, behind one
/// lock so the state can cross into `BlockingWork` (the digests are `~Copyable` and not
/// thread-safe). The writer runs one call at a time, so the lock is never contended. Every call
/// blocks on the disk: run it inside `BlockingWork.run`.
final class BlobSink: Sendable {
    /// What ``seal(count:)`` reports.
    struct Sealed: Sendable {
        var crc32: UInt32?
        var segments: [Segment]
        var md5: [UInt8]?
        var etag: EtagHasher.Result?
        var blockSHA1: [UInt8]?
    }

    private struct State: ~Copyable {
        /// The blob being written and its length; for a v1 chunk, the block from its offset.
        var current: (blob: BlobID, length: Int64)?
        /// Whether `current`'s length is where this sink's own last append to it ended (the
        /// next append is `BlockStore.appendFollowing`).
        var following = false
        var finished: [Segment] = []
        var created: [BlobID] = []
        var crc: CRC32?
        var md5: Digest?
        var etag: EtagHasher?
        /// Why an append failed: the appends queued behind it fail too (see ``append(_:closing:)``).
        var failure: (any Error)?
    }

    private let target: BlobTarget
    private let store: any BlockStore
    private let hashes: BlockHashCache
    private let syncEveryChunk: Bool
    private let state: Mutex<State>

    init(target: BlobTarget, store: any BlockStore, hashes: BlockHashCache, syncEveryChunk: Bool) {
        self.target = target
        self.store = store
        self.hashes = hashes
        self.syncEveryChunk = syncEveryChunk
        var initial = State()
        if case .block(let blob, let offset, _) = target.layout { initial.current = (blob, offset) }
        if target.crc32 { initial.crc = CRC32() }
        if target.md5 { initial.md5 = Digest(.md5) }
        if target.etag { initial.etag = EtagHasher() }
        state = Mutex(initial)
    }

    /// Appends `bytes` to the current blob (creating one first if needed), feeds every digest,
    /// and — when `closing` (a 4 MiB boundary of `.blocks`) — seals the blob. Keeps no reference
    /// to `bytes`: the writer refills that buffer next.
    ///
    /// Once an append has failed, every later one throws the same error without writing: the
    /// writer may have queued the next buffer already, and its bytes belong after the failed
    /// ones, not where the blob now ends.
    func append(_ bytes: [UInt8], closing: Bool) throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            do {
                try append(bytes, closing: closing, &state)
            } catch {
                state.failure = error
                throw error
            }
        }
    }

    private func append(_ bytes: [UInt8], closing: Bool, _ state: inout State) throws {
        let (blob, length) = try current(&state)
        let following = state.following
        state.following = false  // until this append has succeeded
        let end =
            following
            ? try store.appendFollowing(bytes, to: blob, at: length) : try store.append(bytes, to: blob, at: length)
        state.following = true
        if case .block = target.layout { try hashes.update(blob, at: length, with: bytes, store: store) }
        state.crc?.update(bytes)
        state.md5?.update(bytes)
        state.etag?.update(bytes)
        state.current = (blob, end)
        if closing { try close(&state) }
    }

    /// Ends the body of `count` bytes: the fsync policy of `BlobWriter`, and the digests.
    func seal(count: Int64) throws -> Sealed {
        try state.withLock { state in
            var blockSHA1: [UInt8]?
            switch target.layout {
            case .block(let blob, let offset, let blockSize):
                let end = offset + count
                if end == blockSize {
                    // DESIGN.md: a block is fsynced when it completes; its SHA-1 (§7.1) comes from
                    // the running hash, no re-read.
                    try sync(blob)
                    blockSHA1 = try hashes.finalize(blob, length: end, store: store)
                } else if syncEveryChunk {
                    try sync(blob)
                }
            case .oneBlob:
                _ = try current(&state)  // an empty part still has its (empty) blob
                try close(&state)
            case .blocks:
                if state.current != nil { try close(&state) }
            }
            var md5: [UInt8]?
            if let digest = state.md5.take() { md5 = digest.finalize() }
            var etag: EtagHasher.Result?
            if let hasher = state.etag.take() { etag = hasher.finalize() }
            return Sealed(crc32: state.crc?.value, segments: state.finished, md5: md5, etag: etag, blockSHA1: blockSHA1)
        }
    }

    /// Removes every blob created (the body failed before an object or part took them).
    func removeCreated() throws {
        let blobs = state.withLock { state in
            defer { state.created = [] }
            return state.created
        }
        for blob in blobs { try store.remove(blob) }
    }

    /// The blob being written, created if there is none.
    private func current(_ state: inout State) throws -> (blob: BlobID, length: Int64) {
        if let current = state.current { return current }
        let blob = try store.create()
        state.created.append(blob)
        state.current = (blob, 0)
        return (blob, 0)
    }

    /// Makes the blob's bytes durable, unless the store's confirmed writes already are.
    private func sync(_ blob: BlobID) throws {
        if !store.writesAreDurable { try store.sync(blob) }
    }

    /// Seals the current new blob: fsync (it is complete), and it becomes a segment. An empty
    /// blob is synced whatever the store: S3 stores nothing for a blob before its first append,
    /// and its sync is what stores an empty one.
    private func close(_ state: inout State) throws {
        guard let (blob, length) = state.current else { return }
        if length == 0 { try store.sync(blob) } else { try sync(blob) }
        state.finished.append(Segment(blob: blob, length: length))
        state.current = nil
        state.following = false
    }
}
