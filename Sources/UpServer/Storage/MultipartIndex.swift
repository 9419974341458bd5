public import Outbox

/// v2 multipart uploads and their parts (qiniu-protocol.md §5). Completing an upload stores its
/// object like `ObjectIndex.putObject` — object, completion record and callback in the same
/// transaction as the upload's end — so the implementation shares the objects' database.
///
/// Every implementation passes the same contract suite (`Tests/UpServerTests/Storage/`):
/// `SQLiteUpIndex` (production) and the in-memory twin `InMemoryUpIndex` (TestSupport). Times are
/// Unix seconds, passed in (no clock inside); no SQLite type appears here, so a PostgreSQL
/// implementation can follow without touching a caller.
public protocol MultipartIndex: Sendable {
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
        callback: OutboxMessage?, now: Int64
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
}
