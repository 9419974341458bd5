import Synchronization
import UpCore

/// The answers of recently completed v2 uploads, so a repeated complete returns the first result.
///
/// The spec makes a completed uploadId invalid (qiniu-protocol.md §5 → 612), but DESIGN.md wants
/// completion idempotent: "repeating a finished one returns the first result" — a client whose
/// connection dropped before the reply would otherwise see 612 for an upload that succeeded. We
/// honour DESIGN.md for an *identical* repeat (same bucket, key and parts list) while the upload is
/// within its advertised `expireAt`; anything else still gets 612.
///
/// Kept in memory, not in the index: `UpIndex.completeUpload` has no completion record to attach
/// the reply to (unlike mkfile's `CompletionKey`), and adding one is a schema change outside the v2
/// controller. Consequences, accepted: after a restart, or on another node, a repeat gets 612 (the
/// spec's answer). Bounded by ``capacity``; expired entries go first.
final class CompletedUploads: Sendable {
    /// One remembered completion.
    struct Entry: Sendable {
        /// The bucket of the upload.
        var bucket: String
        /// The key from the init path (`nil` for `~`).
        var key: String?
        /// The complete request's (partNumber, etag) list.
        var parts: [CompleteMultipartRequest.Part]
        /// What the first complete answered.
        var result: CommitResult
        /// The upload's `expireAt`; the entry is dropped then.
        var expiresAt: Int64
    }

    /// Most entries kept.
    let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    /// Creates an empty memory of at most `capacity` completions.
    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// Remembers the answer for `uploadID`.
    func remember(_ uploadID: String, _ entry: Entry, now: Int64) {
        entries.withLock { entries in
            entries[uploadID] = entry
            guard entries.count > capacity else { return }
            entries = entries.filter { $0.value.expiresAt > now }
            while entries.count > capacity, let oldest = entries.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
                entries[oldest.key] = nil
            }
        }
    }

    /// The first answer, if `uploadID` was completed with exactly this bucket, key and parts list
    /// and has not expired at `now`.
    func result(
        for uploadID: String, bucket: String, key: String?, parts: [CompleteMultipartRequest.Part], now: Int64
    ) -> CommitResult? {
        entries.withLock { entries in
            guard let entry = entries[uploadID] else { return nil }
            guard entry.expiresAt > now else {
                entries[uploadID] = nil
                return nil
            }
            guard entry.bucket.utf8.elementsEqual(bucket.utf8), MultipartController.sameKey(entry.key, key),
                entry.parts.count == parts.count,
                zip(entry.parts, parts).allSatisfy({
                    $0.partNumber == $1.partNumber && $0.etag.utf8.elementsEqual($1.etag.utf8)
                })
            else { return nil }
            return entry.result
        }
    }
}
