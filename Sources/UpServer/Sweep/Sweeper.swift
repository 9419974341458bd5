/// Carries out `SweepPlan`s: deletes expired rows through the index, then their blobs.
///
/// Rows first, blobs after the commit: a crash in between leaves orphan blobs (found later by
/// `orphans`), never a row naming a missing blob.
public struct Sweeper: Sendable {
    /// The metadata.
    public let index: any SweepIndex
    /// The bytes.
    public let store: any BlockStore
    /// Running hashes to forget for deleted blobs.
    public let hashes: BlockHashCache?

    /// Creates a sweeper over `index` and `store`.
    public init(index: any SweepIndex, store: any BlockStore, hashes: BlockHashCache? = nil) {
        self.index = index
        self.store = store
        self.hashes = hashes
    }

    /// Sweeps everything expired at `now` (Unix seconds).
    ///
    /// - Returns: The plan that was carried out.
    /// - Throws: The index's or the store's errors; a store error leaves the remaining blobs as
    ///   orphans for a later pass.
    @discardableResult
    public func sweep(now: Int64) async throws -> SweepPlan {
        let plan = try await index.sweepExpired(now: now)
        for blob in plan.blobs { hashes?.remove(blob) }
        // Off the cooperative pool, like every other store call: rows first, blobs after the commit.
        try await store.remove(plan.blobs)
        return plan
    }

    /// Most objects one lifecycle transaction deletes; a pass repeats until fewer are due.
    public static let lifecycleBatch = 500

    /// Deletes every object whose `deleteAfterDays` ran out by `now` (Qiniu's lifecycle rule),
    /// in batches, then the blobs no other object shares (a copy keeps them alive).
    ///
    /// - Returns: The objects deleted and the blobs removed.
    /// - Throws: The index's or the store's errors; what a store error leaves behind is an
    ///   orphan for a later pass, never a row naming a missing blob.
    @discardableResult
    public func sweepExpiredObjects(now: Int64) async throws -> ExpiredObjects {
        var total = ExpiredObjects()
        while true {
            let batch = try await index.deleteExpiredObjects(now: now, limit: Self.lifecycleBatch)
            try await store.remove(batch.blobs)
            total.names += batch.names
            total.blobs += batch.blobs
            if batch.names.count < Self.lifecycleBatch { return total }
        }
    }

    /// Blobs on disk that no row names. Pure: the caller lists both sides.
    ///
    /// A blob is created before its row is inserted, so a just-created blob looks orphaned for a
    /// moment: delete only candidates seen in two passes far enough apart.
    public static func orphans(onDisk: [BlobID], known: Set<BlobID>) -> [BlobID] {
        onDisk.filter { !known.contains($0) }
    }
}
