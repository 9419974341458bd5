import NativePostgres

extension PostgresUpIndex: SweepIndex {
    /// See `SweepIndex.sweepExpired(now:)`: `SweepPlan.make`'s rule, in one transaction.
    ///
    /// The expired rows are locked (`FOR UPDATE`) before anything is decided: an upload being
    /// completed on another instance holds its row lock, so the sweep waits and then sees it
    /// completed (and its parts gone); a block row is only read by mkfile, which checks it is
    /// unexpired first, so an expired block gets no new object.
    public func sweepExpired(now: Int64) async throws -> SweepPlan {
        try await transaction { connection in
            let blocks = try connection.query(
                "SELECT \(SQLiteUpIndex.blockColumns) FROM blocks WHERE expires_at <= $1 ORDER BY blob FOR UPDATE",
                [.integer(now)]
            ).rows.map(Rows.block)
            let uploads = try connection.query(
                "SELECT \(SQLiteUpIndex.uploadColumns) FROM uploads WHERE expires_at <= $1 ORDER BY id FOR UPDATE",
                [.integer(now)]
            ).rows.map(Rows.upload).map { upload in
                (upload, try Self.parts(upload.id, on: connection).values.map(\.blob))
            }
            var lookupError: (any Error)?
            let plan = SweepPlan.make(now: now, blocks: blocks, uploads: uploads) { blob in
                do {
                    return try !connection.query("SELECT 1 FROM segments WHERE blob = $1 LIMIT 1", [.text(blob.hex)])
                        .rows.isEmpty
                } catch {
                    // Fail safe: treat it as referenced, and abort the sweep below.
                    lookupError = error
                    return true
                }
            }
            if let lookupError { throw lookupError }
            for blob in plan.blockRows { try connection.query("DELETE FROM blocks WHERE blob = $1", [.text(blob.hex)]) }
            for id in plan.uploadRows { try connection.query("DELETE FROM uploads WHERE id = $1", [.text(id)]) }
            try connection.query("DELETE FROM completions WHERE expires_at <= $1", [.integer(now)])
            return plan
        }
    }

    /// See `SweepIndex.knownBlobs()`.
    public func knownBlobs() async throws -> Set<BlobID> {
        try await connection { connection in
            let rows = try connection.query(
                "SELECT blob FROM blocks UNION SELECT blob FROM segments UNION SELECT blob FROM parts")
            return Set(try rows.rows.map { try Rows.blobID($0.decode(0)) })
        }
    }
}
