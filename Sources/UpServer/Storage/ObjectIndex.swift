public import Outbox

/// Objects and the records of finished uploads (qiniu-protocol.md §4.3, §5 complete; DESIGN.md
/// "mkfile is idempotent"). An object is written in one transaction with its completion record
/// and its callback's outbox entry (DESIGN.md "Callbacks never get lost"), so the implementation
/// shares its database with the callback outbox.
///
/// Every implementation passes the same contract suite (`Tests/UpServerTests/Storage/`):
/// `SQLiteUpIndex` (production) and the in-memory twin `InMemoryUpIndex` (TestSupport). Times are
/// Unix seconds, passed in (no clock inside); no SQLite type appears here, so a PostgreSQL
/// implementation can follow without touching a caller.
public protocol ObjectIndex: Sendable {
    /// Stores `object` under (bucket, key), with `completion` and `callback` (enqueued in the
    /// callback outbox at `object.putTime`) in the same transaction; its `version` is assigned here.
    ///
    /// - Returns: `.alreadyCompleted` (nothing written) if `completion` is already recorded.
    /// - Throws: `UpIndexError.objectExists` for `.insertOnly` on a taken key. If anything
    ///   throws, nothing was written: no object, no completion, no outbox row.
    func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?
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
}
