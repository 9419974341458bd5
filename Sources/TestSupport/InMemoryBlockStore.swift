public import Basics
import Synchronization
import UpCore
public import UpServer

/// A `BlockStore` in memory: the twin of `FileBlockStore` for handler tests.
///
/// Same offset rules (a longer blob is truncated to the expected offset, a shorter one is
/// `missingBytes`); `sync` only counts calls, so tests can check when durability was asked for.
/// ``capacity`` makes a small disk: an append that does not fit fails as `FileBlockStore`'s does
/// on a full disk — `UpError(.insufficientStorage)`, the blob left at the expected offset.
/// A blob's modification time (``inventory()``) is `clock`'s at its last create or append.
public final class InMemoryBlockStore: BlockStore {
    private struct State {
        var blobs: [BlobID: [UInt8]] = [:]
        var modified: [BlobID: Double] = [:]
        var syncs: [BlobID: Int] = [:]
        var capacity: Int64?
        var afterInventory: (@Sendable () -> Void)?
        var appendSize = 256 << 10  // the default of `BlockStore.appendSize`, as FileBlockStore
        var isShared = false
        var appended: [Int] = []
        var following = 0
        var appendCalls = 0
        var reads = 0
        var failing: [Int: any Error] = [:]
    }

    private let state = Mutex(State())
    private let clock: any WallClock

    /// Creates an empty store whose blobs are stamped with `clock`'s time.
    public init(clock: any WallClock = SystemClock()) { self.clock = clock }

    /// See `BlockStore.create()`.
    public func create() throws -> BlobID {
        let blob = BlobID.random()
        let now = clock.now()
        state.withLock {
            $0.blobs[blob] = []
            $0.modified[blob] = now
        }
        return blob
    }

    /// See `BlockStore.append(_:to:at:)`.
    public func append(_ bytes: [UInt8], to blob: BlobID, at expectedOffset: Int64) throws -> Int64 {
        let now = clock.now()
        return try state.withLock { state in
            state.appendCalls += 1
            if let failure = state.failing.removeValue(forKey: state.appendCalls) { throw failure }
            guard var data = state.blobs[blob] else { throw BlockStoreError.notFound(blob) }
            guard Int64(data.count) >= expectedOffset else {
                throw BlockStoreError.missingBytes(blob, expected: expectedOffset, actual: Int64(data.count))
            }
            data.removeSubrange(Int(expectedOffset)...)
            state.blobs[blob] = data  // a failed append is cut back too
            state.modified[blob] = now
            if let capacity = state.capacity {
                let used = state.blobs.values.reduce(Int64(0)) { $0 + Int64($1.count) }
                if used + Int64(bytes.count) > capacity {
                    throw UpError(.insufficientStorage, detail: "in-memory store: \(used) of \(capacity) bytes used")
                }
            }
            data += bytes
            state.blobs[blob] = data
            state.appended.append(bytes.count)
            return Int64(data.count)
        }
    }

    /// See `BlockStore.appendFollowing(_:to:at:)`: checks what a store may take for granted —
    /// the blob ends exactly at `offset` — and fails with `BlockStoreError.io` if it does not,
    /// so a caller that breaks the promise fails its tests.
    public func appendFollowing(_ bytes: [UInt8], to blob: BlobID, at offset: Int64) throws -> Int64 {
        let length = state.withLock { state in
            state.following += 1
            return state.blobs[blob].map { Int64($0.count) }
        }
        guard let length else { throw BlockStoreError.notFound(blob) }
        guard length == offset else {
            throw BlockStoreError.io(blob, reason: "appendFollowing at \(offset), but the blob is \(length) bytes long")
        }
        return try append(bytes, to: blob, at: offset)
    }

    /// Makes the `number`th call of ``append(_:to:at:)`` from the store's start (1 is the first;
    /// ``appendFollowing(_:to:at:)`` calls it too) throw `error` before it touches the blob: a
    /// store failing once, e.g. an I/O error of one write.
    public func failAppend(_ number: Int, with error: any Error) {
        state.withLock { $0.failing[number] = error }
    }

    /// How many appends came through ``appendFollowing(_:to:at:)``.
    public var followingAppends: Int { state.withLock { $0.following } }

    /// Most bytes all blobs may hold together (`nil`: unlimited, the default). Lowering it
    /// below what is stored keeps the blobs; only appends are refused.
    public var capacity: Int64? {
        get { state.withLock { $0.capacity } }
        set { state.withLock { $0.capacity = newValue } }
    }

    /// See `BlockStore.appendSize`: `FileBlockStore`'s unless a test sets an S3-like size.
    public var appendSize: Int {
        get { state.withLock { $0.appendSize } }
        set { state.withLock { $0.appendSize = newValue } }
    }

    /// See `BlockStore.isShared`: `false` (as FileBlockStore) unless a test plays S3 behind
    /// several up-server instances.
    public var isShared: Bool {
        get { state.withLock { $0.isShared } }
        set { state.withLock { $0.isShared = newValue } }
    }

    /// The byte count of every append that succeeded, in order.
    public var appendedSizes: [Int] { state.withLock { $0.appended } }

    /// Bytes held by all blobs.
    public var bytesUsed: Int64 { state.withLock { $0.blobs.values.reduce(Int64(0)) { $0 + Int64($1.count) } } }

    /// See `BlockStore.sync(_:)`.
    public func sync(_ blob: BlobID) throws {
        try state.withLock { state in
            guard state.blobs[blob] != nil else { throw BlockStoreError.notFound(blob) }
            state.syncs[blob, default: 0] += 1
        }
    }

    /// How many reads of stored bytes (`read`, `forEachChunk`) the store has served.
    public var readCount: Int { state.withLock { $0.reads } }

    /// How often `sync` was called for `blob`.
    public func syncCount(of blob: BlobID) -> Int { state.withLock { $0.syncs[blob] ?? 0 } }

    /// See `BlockStore.length(of:)`.
    public func length(of blob: BlobID) throws -> Int64 { Int64(try bytes(of: blob).count) }

    /// See `BlockStore.read(_:range:)`.
    public func read(_ blob: BlobID, range: Range<Int64>) throws -> [UInt8] {
        state.withLock { $0.reads += 1 }
        let data = try bytes(of: blob)
        guard range.lowerBound >= 0, range.upperBound <= Int64(data.count) else {
            throw BlockStoreError.outOfRange(blob, requested: range, length: Int64(data.count))
        }
        return Array(data[Int(range.lowerBound)..<Int(range.upperBound)])
    }

    /// See `BlockStore.forEachChunk(of:range:size:_:)`.
    public func forEachChunk(
        of blob: BlobID, range: Range<Int64>?, size: Int, _ body: ([UInt8]) throws -> Void
    ) throws {
        state.withLock { $0.reads += 1 }
        try Self.forEachChunk(of: try bytes(of: blob), blob: blob, range: range, size: size, body)
    }

    /// See `BlockStore.remove(_:)`.
    public func remove(_ blob: BlobID) throws {
        state.withLock {
            $0.blobs[blob] = nil
            $0.modified[blob] = nil
        }
    }

    /// See `BlockStore.inventory()`.
    public func inventory() throws -> [ListedBlob] {
        let (listed, hook) = state.withLock { state in
            (state.blobs.keys.sorted().map { ListedBlob(id: $0, modifiedAt: state.modified[$0] ?? .infinity) },
             state.afterInventory)
        }
        hook?()
        return listed
    }

    /// Runs `hook` after every ``inventory()`` has read the blobs, before it returns: a test
    /// commits a row there, as another instance could between the orphan sweep's two reads.
    public func afterInventory(_ hook: (@Sendable () -> Void)?) { state.withLock { $0.afterInventory = hook } }

    private func bytes(of blob: BlobID) throws -> [UInt8] {
        guard let data = state.withLock({ $0.blobs[blob] }) else { throw BlockStoreError.notFound(blob) }
        return data
    }
}
