import Basics

/// Where the bytes of blocks (v1) and parts (v2) live, addressed by random `BlobID`s.
///
/// An object is never copied into a file of its own: it is its ordered list of blobs (a
/// manifest, see `StoredObject.segments`), so the store only ever appends to blobs and removes
/// them. Two implementations: `FileBlockStore` (production) and `InMemoryBlockStore` (tests).
///
/// Every call is synchronous and may block (on a disk, or a network for a remote store); callers
/// on the Swift cooperative pool hop to a thread of their own first. A blob has one writer at a
/// time: the up-server serializes chunks of one block with `BlobWriteLocks`, because `append`
/// truncates what lies past the acknowledged offset and two writers would truncate each other's
/// bytes. Nothing here names a file: a store that can serve bytes as file ranges says so with
/// `ByteRangeServing`.
///
/// A full disk is no `BlockStoreError`: `create`, `append` and `sync` throw
/// `UpError(.insufficientStorage)` (503, retryable; see `InsufficientStorage`), and a failed
/// `append` leaves the blob at `expectedOffset`, as if it had not been called.
public protocol BlockStore: Sendable {
    /// Creates an empty blob under a new random id. A store may store nothing until the blob's
    /// first ``append(_:to:at:)`` or ``sync(_:)`` (`S3BlockStore`: its first PUT is its first
    /// chunk): no one else knows the id before then, and in this process the blob exists from
    /// now (length 0, in ``inventory()``).
    ///
    /// - Throws: `BlockStoreError.io`; `UpError(.insufficientStorage)` on a full disk.
    func create() throws -> BlobID

    /// Appends `bytes` at `expectedOffset`, the length the index says is acknowledged.
    ///
    /// "Acknowledged means stored" (DESIGN.md): a blob LONGER than `expectedOffset` holds the
    /// tail of a write that was never acknowledged (the process died before its reply, or
    /// before the index advanced), so it is truncated to `expectedOffset` first. A blob SHORTER
    /// than `expectedOffset` has lost acknowledged bytes and is an error, never papered over.
    /// If the write fails (a full disk half-way through), the blob is cut back to
    /// `expectedOffset`: a failed append leaves no unacknowledged bytes taking space.
    /// - Returns: The new length, `expectedOffset + bytes.count`.
    /// - Throws: `BlockStoreError.notFound`, `.missingBytes`, `.io`; `UpError(.insufficientStorage)`.
    func append(_ bytes: [UInt8], to blob: BlobID, at expectedOffset: Int64) throws -> Int64

    /// ``append(_:to:at:)`` for the next piece of the same write: `offset` is where the caller's
    /// own previous append to `blob`, in the same request body, ended. That append already cut
    /// the blob back to the acknowledged offset, and a blob has one writer at a time, so nothing
    /// lies past `offset` that this writer did not put there: a store may skip the checks (S3:
    /// the LIST before every PUT). Same result, same errors, otherwise.
    func appendFollowing(_ bytes: [UInt8], to blob: BlobID, at offset: Int64) throws -> Int64

    /// Makes the blob's bytes durable (`FileBlockStore`: fsync of the file; its directory entry
    /// was made durable when the blob was created).
    ///
    /// DESIGN.md: blocks are synced when a block completes and when an object is created; a
    /// per-chunk sync is a setting of the store, not of the caller.
    /// - Throws: `BlockStoreError.notFound`, `.io`; `UpError(.insufficientStorage)`.
    func sync(_ blob: BlobID) throws
    /// Whether every write this store confirmed is already durable, so ``sync(_:)`` adds nothing
    /// and callers skip it (S3: a PUT is confirmed once stored; saves a round trip per block).
    /// `false` unless a store says otherwise.
    var writesAreDurable: Bool { get }
    /// Whether other up-server instances write to this store too (S3 behind several nodes), so
    /// this process's `BlobWriteLocks` do not cover every writer of a blob: a request another
    /// node has completed may already have written past an offset this one still holds.
    /// `false` (one process owns the store) unless a store says otherwise.
    var isShared: Bool { get }
    /// Bytes a writer gathers before one ``append(_:to:at:)``: its buffer size (it holds two).
    /// Each append is one write call on a disk, but one PUT (and a LIST) on S3, where fewer,
    /// larger appends cost far less. 256 KiB unless a store says otherwise.
    var appendSize: Int { get }

    /// The blob's current length in bytes.
    ///
    /// - Throws: `BlockStoreError.notFound`, `.io`.
    func length(of blob: BlobID) throws -> Int64

    /// Reads `range` of the blob into memory. For small ranges; use `forEachChunk` to stream.
    ///
    /// - Throws: `BlockStoreError.notFound`, `.outOfRange`, `.io`.
    func read(_ blob: BlobID, range: Range<Int64>) throws -> [UInt8]

    /// Streams `range` of the blob (the whole blob when `nil`) to `body` in pieces of at most
    /// `size` bytes, so hashing or serving a blob never holds it whole in memory.
    ///
    /// - Throws: `BlockStoreError.notFound`, `.outOfRange`, `.io`, or what `body` throws.
    func forEachChunk(of blob: BlobID, range: Range<Int64>?, size: Int, _ body: ([UInt8]) throws -> Void) throws

    /// Reads `range` of the blob in pieces of at most `size` bytes as the caller pulls them,
    /// without blocking the caller's thread: how a download streams from the store
    /// (`SegmentReader`). Nothing is read before the first `next()`. The default reads slices
    /// with ``read(_:range:)`` off the cooperative pool; `S3BlockStore` streams ranged GETs.
    func pieceReader(of blob: BlobID, range: Range<Int64>, size: Int) -> any BlobPieceReader

    /// Deletes the blob. Removing a blob that does not exist is not an error (sweeps repeat).
    ///
    /// - Throws: `BlockStoreError.io`.
    func remove(_ blob: BlobID) throws

    /// Every blob in the store, sorted by id, with when it was last written (the orphan sweep
    /// removes only blobs no row names that are older than `orphanGraceSeconds`).
    ///
    /// - Throws: `BlockStoreError.io`.
    func inventory() throws -> [ListedBlob]
}

extension BlockStore {
    /// See ``BlockStore/writesAreDurable``: a store's confirmed writes need ``sync(_:)`` unless
    /// it says otherwise.
    public var writesAreDurable: Bool { false }

    /// See ``BlockStore/isShared``: one process owns a store unless it says otherwise.
    public var isShared: Bool { false }

    /// See ``BlockStore/appendSize``: 256 KiB unless a store says otherwise.
    public var appendSize: Int { BlobWriter.bufferLimit }

    /// See ``BlockStore/appendFollowing(_:to:at:)``: ``BlockStore/append(_:to:at:)``, checks
    /// and all, unless a store has something to save.
    public func appendFollowing(_ bytes: [UInt8], to blob: BlobID, at offset: Int64) throws -> Int64 {
        try append(bytes, to: blob, at: offset)
    }

    /// Every blob in the store, sorted (``inventory()`` without the times).
    public func list() throws -> [BlobID] { try inventory().map(\.id) }
}

extension BlockStore {
    /// ``forEachChunk(of:range:size:_:)`` for a blob whose bytes are in memory (a row of the disk
    /// store, any blob of the in-memory twin): `range` of `bytes` (all of them when nil) in pieces
    /// of at most `size`; a range past the end is `outOfRange`.
    public static func forEachChunk(
        of bytes: [UInt8], blob: BlobID, range: Range<Int64>?, size: Int, _ body: ([UInt8]) throws -> Void
    ) throws {
        precondition(size > 0, "chunk size must be positive")
        let range = range ?? 0..<Int64(bytes.count)
        guard range.lowerBound >= 0, range.upperBound <= Int64(bytes.count) else {
            throw BlockStoreError.outOfRange(blob, requested: range, length: Int64(bytes.count))
        }
        var start = Int(range.lowerBound)
        while start < Int(range.upperBound) {
            let end = min(start + size, Int(range.upperBound))
            try body(Array(bytes[start..<end]))
            start = end
        }
    }

    /// Streams the whole blob in pieces of at most `size` bytes (default 64 KiB).
    public func forEachChunk(of blob: BlobID, size: Int = 64 * 1024, _ body: ([UInt8]) throws -> Void) throws {
        try forEachChunk(of: blob, range: nil, size: size, body)
    }
}

extension BlockStore {
    /// Removes `blobs` off the cooperative pool (`BlockingWork`): blobs an index write released,
    /// or a failed request's. Stops at the first failure; what is left, the sweeps find.
    func remove(_ blobs: [BlobID]) async throws {
        guard !blobs.isEmpty else { return }
        try await BlockingWork.run { for blob in blobs { try self.remove(blob) } }
    }

    /// Removes `blobs` nothing references any more, best effort: a failure is logged (naming
    /// `what`), and the sweeps find what is left.
    func release(_ blobs: [BlobID], what: String, logger: Logger) async {
        do {
            try await remove(blobs)
        } catch {
            logger.warning("could not remove \(what)", ["count": .int(Int64(blobs.count)), "error": .string("\(error)")])
        }
    }
}
