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

    /// Deletes, in one transaction, at most `limit` objects whose lifecycle rule has run out
    /// (`StoredObject.expiresAt <= now`), oldest expiry first.
    ///
    /// - Returns: The deleted names and the blobs nothing references any more (a blob shared
    ///   with a copy that lives on is kept): remove those from the `BlockStore` afterwards.
    func deleteExpiredObjects(now: Int64, limit: Int) async throws -> ExpiredObjects
}

/// What `SweepIndex.deleteExpiredObjects(now:limit:)` deleted.
public struct ExpiredObjects: Sendable, Equatable {
    /// The objects deleted, in expiry order.
    public var names: [ObjectName]
    /// Blobs no row names any more.
    public var blobs: [BlobID]

    /// Creates a result.
    public init(names: [ObjectName] = [], blobs: [BlobID] = []) {
        self.names = names
        self.blobs = blobs
    }
}
