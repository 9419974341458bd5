/// Which store blobs the orphan sweep removes — the one rule, pure (the listing, the known
/// blobs and the time are arguments), so it is tested without a store or an index.
///
/// An orphan is a blob no row names: a kill -9 between a blob's creation and its row, or between
/// a row's delete and the blob's removal, leaves one. But every blob is created before its row,
/// so a blob another instance JUST created looks the same for a moment: only a blob whose last
/// write is more than `graceSeconds` old goes. The ages are the store's (`ListedBlob`), so the
/// rule holds across instances and restarts, provided clocks agree to well within the grace.
///
/// Callers list the store FIRST and read the known blobs AFTER: a row that commits between the
/// two reads is then known. Read the other way round, a blob created and named in between would
/// be listed but not known, and removed although a row names it.
public enum OrphanRule {
    /// The blobs of `listed` to remove at `now` (Unix seconds): not in `known`, and last written
    /// more than `graceSeconds` before `now`. Sorted, as listed.
    public static func orphans(listed: [ListedBlob], known: Set<BlobID>, now: Double, graceSeconds: Int64) -> [BlobID] {
        listed.filter { !known.contains($0.id) && now - $0.modifiedAt > Double(graceSeconds) }.map(\.id)
    }
}
