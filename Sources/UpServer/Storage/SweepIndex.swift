/// What garbage collection asks of the index: expired blocks, uploads and completion records go
/// in one transaction (`SweepPlan` decides which), and every blob still named anywhere is known,
/// so the orphan sweep keeps it.
///
/// Every implementation passes the same contract suite (`Tests/UpServerTests/Storage/`):
/// `SQLiteUpIndex` (production) and the in-memory twin `InMemoryUpIndex` (TestSupport). Times are
/// Unix seconds, passed in (no clock inside); no SQLite type appears here, so a PostgreSQL
/// implementation can follow without touching a caller.
public protocol SweepIndex: Sendable {
    /// Applies `SweepPlan.make` at `now` in one transaction: deletes the expired block, upload
    /// and part rows and expired completion records.
    ///
    /// - Returns: The plan; remove `plan.blobs` from the `BlockStore` afterwards.
    func sweepExpired(now: Int64) async throws -> SweepPlan

    /// Every blob named by any object, block or part (the orphan sweep keeps these).
    func knownBlobs() async throws -> Set<BlobID>
}
