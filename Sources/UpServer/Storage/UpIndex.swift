/// The up-server's metadata: blocks, objects, mkfile completions, v2 uploads and parts, and the
/// callback outbox. Bytes live in a `BlockStore`; this only names blobs.
///
/// Two implementations pass one behavioural suite: `SQLiteUpIndex` (production; WAL,
/// synchronous FULL, so every commit is durable before the handler replies — "acknowledged
/// means stored") and `InMemoryUpIndex` (handler tests). Every multi-row change is one
/// transaction. Times are Unix seconds, passed in (no clock inside).
public protocol UpIndex: Sendable {
    // MARK: Blocks (qiniu-protocol.md §4.1–4.2)

    /// Records a new block held by `blob` whose first `received` bytes are already in the blob
    /// (mkblk writes its first chunk before the row exists): ONE write, so a full disk or a crash
    /// leaves no row, or a row with the whole first chunk — never an empty row whose blob is gone.
    ///
    /// - Parameters:
    ///   - crc32: CRC-32 of the first `received` bytes.
    ///   - sha1: The block's SHA-1; required exactly when `received == blockSize`.
    /// - Throws: `UpIndexError.invalidArgument` unless 1 ≤ `blockSize` ≤ 4194304, or for
    ///   `received`/`sha1` as in `advanceBlock`.
    func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, expiresAt: Int64,
        createdAt: Int64
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

    // MARK: Objects and mkfile completions (§4.3, DESIGN.md)

    /// Stores `object` under (bucket, key), with `completion` and `callback` in the same
    /// transaction; its `version` is assigned here.
    ///
    /// - Returns: `.alreadyCompleted` (nothing written) if `completion` is already recorded.
    /// - Throws: `UpIndexError.objectExists` for `.insertOnly` on a taken key. If anything
    ///   throws, nothing was written: no object, no completion, no outbox row.
    func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: NewOutboxEntry?
    ) async throws -> PutObjectOutcome

    /// The object under (bucket, key), if any.
    func object(bucket: String, key: String) async throws -> StoredObject?

    /// Deletes the object under (bucket, key).
    ///
    /// - Returns: `nil` if there was none, else the blobs no longer referenced by anything.
    func deleteObject(bucket: String, key: String) async throws -> [BlobID]?

    /// The recorded completion for `key`, if any.
    func completion(_ key: CompletionKey) async throws -> Completion?

    /// Records the answer of a completed mkfile unless one is already recorded.
    ///
    /// - Returns: The recorded (first) result; `nil` if no completion exists for `key`.
    func recordCompletionResult(_ key: CompletionKey, result: String) async throws -> String?

    // MARK: v2 multipart (§5)

    /// Starts an upload with a new random id.
    func createUpload(bucket: String, key: String?, expiresAt: Int64, createdAt: Int64) async throws -> MultipartUpload

    /// The upload with `id`, in whatever state.
    func upload(id: String) async throws -> MultipartUpload?

    /// Stores or replaces a part (§5: re-uploading a partNumber replaces it).
    ///
    /// - Returns: The blob of the replaced part, if it is referenced by nothing else (delete it).
    /// - Throws: `UpIndexError.noSuchUpload` unless the upload is usable at `now`;
    ///   `.invalidArgument` for a number outside 1…10000.
    func putPart(_ part: UploadPart, now: Int64) async throws -> BlobID?

    /// Parts numbered above `marker`, ascending, at most `max` (clamped to 1…1000).
    func listParts(uploadID: String, marker: Int, max: Int) async throws -> PartListing

    /// Completes an upload: checks that every reference matches a stored part and that
    /// `object.segments` are exactly those parts' blobs in order, stores the object (with
    /// `completion` and callback), marks the upload completed and drops its part rows — one
    /// transaction.
    ///
    /// - Returns: `.stored`, with the blobs of parts left out of the object among `releasedBlobs`;
    ///   `.alreadyCompleted` (nothing written) if `completion` is already recorded — a repeat of
    ///   the complete that finished the upload.
    /// - Throws: `UpIndexError.noSuchUpload` unless usable at `now`; `.partMismatch`;
    ///   `.objectExists` for `.insertOnly`.
    func completeUpload(
        _ id: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?,
        callback: NewOutboxEntry?, now: Int64
    ) async throws -> PutObjectOutcome

    /// Aborts an active upload and drops its parts.
    ///
    /// - Returns: The parts' blobs, to delete.
    /// - Throws: `UpIndexError.noSuchUpload` unless the upload is active.
    func abortUpload(_ id: String) async throws -> [BlobID]

    /// Ends an active upload whose object was not written because its key already held the same
    /// content (an insert-only complete, spec §1.3): marks it completed, records `completion` so
    /// a repeat of that complete gets the same answer, and drops its parts — one transaction.
    ///
    /// - Returns: The parts' blobs, to delete.
    /// - Throws: `UpIndexError.noSuchUpload` unless the upload is active.
    func retireUpload(_ id: String, recording completion: Completion) async throws -> [BlobID]

    // MARK: Callback outbox (DESIGN.md "Callbacks never get lost")

    /// Pending entries with `nextAttemptAt <= now`, earliest first (then by id), at most `limit`.
    func dueCallbacks(now: Int64, limit: Int) async throws -> [OutboxEntry]

    /// The entry with `id`, if any.
    func outboxEntry(id: Int64) async throws -> OutboxEntry?

    /// Records delivery: state `delivered`, attempts + 1, `reply` kept.
    ///
    /// - Throws: `UpIndexError.notFound`.
    func markDelivered(_ id: Int64, reply: String) async throws

    /// Records a failed attempt: attempts + 1, `lastError` set; pending again at
    /// `nextAttemptAt`, or `failed` for good when it is `nil`.
    ///
    /// - Throws: `UpIndexError.notFound`.
    func markAttemptFailed(_ id: Int64, error: String, nextAttemptAt: Int64?) async throws

    /// Number of pending entries.
    func outboxDepth() async throws -> Int

    /// Entries in `state`, newest first, at most `limit` (admin listing).
    func listOutbox(state: OutboxEntry.State, limit: Int) async throws -> [OutboxEntry]

    // MARK: Garbage collection

    /// Block rows with `expiresAt <= now`.
    func expiredBlocks(now: Int64) async throws -> [BlockRecord]

    /// Upload rows with `expiresAt <= now`, in any state.
    func expiredUploads(now: Int64) async throws -> [MultipartUpload]

    /// Applies `SweepPlan.make` at `now` in one transaction: deletes the expired block, upload
    /// and part rows and expired completion records.
    ///
    /// - Returns: The plan; remove `plan.blobs` from the `BlockStore` afterwards.
    func sweepExpired(now: Int64) async throws -> SweepPlan

    /// Every blob named by any object, block or part (the orphan sweep keeps these).
    func knownBlobs() async throws -> Set<BlobID>
}

extension UpIndex {
    /// Records a new, empty block held by `blob`.
    ///
    /// - Throws: `UpIndexError.invalidArgument` unless 1 ≤ `blockSize` ≤ 4194304.
    public func createBlock(_ blob: BlobID, blockSize: Int64, expiresAt: Int64, createdAt: Int64) async throws
        -> BlockRecord
    {
        try await createBlock(
            blob, blockSize: blockSize, received: 0, crc32: 0, sha1: nil, expiresAt: expiresAt, createdAt: createdAt)
    }
}
