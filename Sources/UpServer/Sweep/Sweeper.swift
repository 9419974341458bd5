/// Carries out `SweepPlan`s: deletes expired rows through the index, then their blobs; and
/// removes orphan blobs (`OrphanRule`).
///
/// Rows first, blobs after the commit: a crash in between leaves orphan blobs (found later by
/// ``sweepOrphans(now:)``), never a row naming a missing blob.
public struct Sweeper: Sendable {
    /// The metadata.
    public let index: any SweepIndex
    /// The bytes.
    public let store: any BlockStore
    /// Running hashes to forget for deleted blobs.
    public let hashes: BlockHashCache?
    /// How old an unnamed blob must be before it is an orphan (`orphanGraceSeconds`).
    public let orphanGraceSeconds: Int64

    /// Creates a sweeper over `index` and `store`.
    public init(
        index: any SweepIndex, store: any BlockStore, hashes: BlockHashCache? = nil, orphanGraceSeconds: Int64 = 3600
    ) {
        self.index = index
        self.store = store
        self.hashes = hashes
        self.orphanGraceSeconds = orphanGraceSeconds
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

    /// Removes the store's orphans at `now` (Unix seconds): blobs no row names, last written
    /// more than ``orphanGraceSeconds`` ago. The store is listed before the index is read
    /// (`OrphanRule` says why the order matters).
    ///
    /// - Returns: The blobs removed.
    /// - Throws: The store's or the index's errors; what is left, the next pass finds.
    @discardableResult
    public func sweepOrphans(now: Double) async throws -> [BlobID] {
        let store = self.store
        let listed = try await BlockingWork.run { try store.inventory() }
        let known = try await index.knownBlobs()
        let orphans = OrphanRule.orphans(listed: listed, known: known, now: now, graceSeconds: orphanGraceSeconds)
        for blob in orphans { hashes?.remove(blob) }
        try await store.remove(orphans)
        return orphans
    }
}
