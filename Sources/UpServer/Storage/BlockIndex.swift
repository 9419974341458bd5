/// The v1 blocks' index (qiniu-protocol.md §4.1–4.2): for each block being uploaded, how many of
/// its bytes are acknowledged. The bytes themselves live in a `BlockStore`; this only names blobs.
///
/// Every implementation passes the same contract suite (`Tests/UpServerTests/Storage/`):
/// `SQLiteUpIndex` (production) and the in-memory twin `InMemoryUpIndex` (TestSupport). Times are
/// Unix seconds, passed in (no clock inside); no SQLite type appears here, so a PostgreSQL
/// implementation can follow without touching a caller.
public protocol BlockIndex: Sendable {
    /// Records a new block held by `blob` whose first `received` bytes are already in the blob
    /// (mkblk writes its first chunk before the row exists): ONE write, so a full disk or a crash
    /// leaves no row, or a row with the whole first chunk — never an empty row whose blob is gone.
    ///
    /// - Parameters:
    ///   - crc32: CRC-32 of the first `received` bytes.
    ///   - sha1: The block's SHA-1; required exactly when `received == blockSize`.
    ///   - sniffedType: `BlockRecord.sniffedType`: what the first bytes were sniffed as, if known.
    /// - Throws: `UpIndexError.invalidArgument` unless 1 ≤ `blockSize` ≤ 4194304, or for
    ///   `received`/`sha1` as in `advanceBlock`.
    func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String??,
        expiresAt: Int64, createdAt: Int64
    ) async throws -> BlockRecord

    /// Moves the block's offset from `expectedOffset` to `newOffset` — compare-and-set, so a
    /// duplicate or concurrent chunk cannot advance it twice.
    ///
    /// - Parameters:
    ///   - crc32: CRC-32 of the block's first `newOffset` bytes.
    ///   - sha1: The block's SHA-1; required exactly when `newOffset == blockSize`.
    /// - Returns: `false` if the block does not exist or its offset is not `expectedOffset`.
    /// - Throws: `UpIndexError.invalidArgument` for an offset past the block size, going
    ///   backwards, or `sha1` given/missing against completion.
    func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) async throws -> Bool

    /// Moves an INCOMPLETE block back from `currentOffset` to `offset` (compare-and-set), for a
    /// client resuming from an older ctx whose later chunk the server accepted but whose reply the
    /// client never got (qiniu-protocol.md §4.2; a kill -9 of the client at the wrong moment).
    /// The bytes past `offset` were acknowledged only to a client that lost the answer, so
    /// forgetting them loses nothing anyone holds; a complete block is never rewound.
    ///
    /// - Parameter crc32: CRC-32 of the block's first `offset` bytes (from the authentic ctx).
    /// - Returns: `false` if the block does not exist, is complete, or is not at `currentOffset`.
    func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) async throws -> Bool

    /// The block held by `blob`, if any.
    func block(_ blob: BlobID) async throws -> BlockRecord?
}

extension BlockIndex {
    /// Records a new, empty block held by `blob`.
    ///
    /// - Throws: `UpIndexError.invalidArgument` unless 1 ≤ `blockSize` ≤ 4194304.
    public func createBlock(_ blob: BlobID, blockSize: Int64, expiresAt: Int64, createdAt: Int64) async throws
        -> BlockRecord
    {
        try await createBlock(
            blob, blockSize: blockSize, received: 0, crc32: 0, sha1: nil, sniffedType: nil, expiresAt: expiresAt,
            createdAt: createdAt)
    }
}
