/// What a sweep deletes — the one rule every `SweepIndex` implementation applies.
///
/// Expired block rows and expired (or finished) upload rows go; their blobs go too, unless an
/// object references them: a block whose blob became part of an object is never swept, since
/// the object is its only copy (see `StoredObject`). Pure: time and the reference test are
/// arguments, so the rule is tested without a database.
public struct SweepPlan: Sendable, Equatable {
    /// Block rows to delete.
    public var blockRows: [BlobID]
    /// Upload rows (and their part rows) to delete.
    public var uploadRows: [String]
    /// Blobs to remove from the `BlockStore` once the rows are gone.
    public var blobs: [BlobID]

    /// Creates a plan.
    public init(blockRows: [BlobID] = [], uploadRows: [String] = [], blobs: [BlobID] = []) {
        self.blockRows = blockRows
        self.uploadRows = uploadRows
        self.blobs = blobs
    }

    /// Whether there is nothing to do.
    public var isEmpty: Bool { blockRows.isEmpty && uploadRows.isEmpty && blobs.isEmpty }

    /// Decides what to delete at `now` (Unix seconds).
    ///
    /// A block or upload expires when `expiresAt <= now`: the Python SDK already discards a ctx
    /// whose `expired_at <= now` (qiniu-protocol.md §9.4), so nothing honours it after that.
    /// Callers wanting a grace period pass an earlier `now`.
    /// - Parameters:
    ///   - now: The sweep time.
    ///   - blocks: Candidate block rows (unexpired ones are ignored).
    ///   - uploads: Candidate upload rows with the blobs of their parts (unexpired ones ignored).
    ///   - isReferencedByObject: Whether an object's segments include the blob.
    public static func make(
        now: Int64,
        blocks: [BlockRecord],
        uploads: [(upload: MultipartUpload, partBlobs: [BlobID])],
        isReferencedByObject: (BlobID) -> Bool
    ) -> SweepPlan {
        var plan = SweepPlan()
        for block in blocks where block.expiresAt <= now {
            plan.blockRows.append(block.blob)
            if !isReferencedByObject(block.blob) { plan.blobs.append(block.blob) }
        }
        for (upload, partBlobs) in uploads where upload.expiresAt <= now {
            plan.uploadRows.append(upload.id)
            plan.blobs += partBlobs.filter { !isReferencedByObject($0) }
        }
        plan.blockRows.sort()
        plan.uploadRows.sort()
        plan.blobs = Array(Set(plan.blobs)).sorted()
        return plan
    }
}
