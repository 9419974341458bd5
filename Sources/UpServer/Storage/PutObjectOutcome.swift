public import Outbox

/// What `ObjectIndex.putObject` and `MultipartIndex.completeUpload` did.
public enum PutObjectOutcome: Sendable, Equatable {
    /// The object was stored (with its completion record and callback, if given).
    ///
    /// - object: As stored, with its assigned `version`.
    /// - releasedBlobs: Blobs of the replaced object (or of unused parts) that nothing
    ///   references any more — no object, block or part row. Delete them from the `BlockStore`
    ///   after this returns; never before, so a crash in between only leaves orphans.
    /// - callback: The callback's outbox entry, if one was enqueued.
    case stored(object: StoredObject, releasedBlobs: [BlobID], callback: OutboxEntry?)
    /// The completion key was already recorded: an earlier identical mkfile stored the object,
    /// and nothing was written now. Answer with its result (DESIGN.md "mkfile is idempotent").
    case alreadyCompleted(Completion)
}
