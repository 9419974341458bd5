import NativeStore

extension SQLiteUpIndex: SweepIndex {
    /// Block rows with `expiresAt <= now`.
    static func expiredBlocks(now: Int64, in database: SQLiteDatabase) throws -> [BlockRecord] {
        try database.query(
            "SELECT \(blockColumns) FROM blocks WHERE expires_at <= ? ORDER BY blob", [.integer(now)]
        ).map(Rows.block)
    }

    /// Upload rows with `expiresAt <= now`, in any state.
    static func expiredUploads(now: Int64, in database: SQLiteDatabase) throws -> [MultipartUpload] {
        try database.query(
            "SELECT \(uploadColumns) FROM uploads WHERE expires_at <= ? ORDER BY id", [.integer(now)]
        ).map(Rows.upload)
    }

    /// See `SweepIndex.sweepExpired(now:)`. Deciding and deleting share one transaction, so an
    /// mkfile that commits an object using an expiring block cannot slip between them.
    public func sweepExpired(now: Int64) async throws -> SweepPlan {
        try await perform { database in
            try database.transaction {
                let uploads = try Self.expiredUploads(now: now, in: database).map { upload in
                    (upload, try Self.parts(upload.id, in: database).values.map(\.blob))
                }
                var lookupError: (any Error)?
                let plan = SweepPlan.make(
                    now: now, blocks: try Self.expiredBlocks(now: now, in: database), uploads: uploads
                ) { blob in
                    do {
                        return try !database.query("SELECT 1 FROM segments WHERE blob = ? LIMIT 1", [.text(blob.hex)])
                            .isEmpty
                    } catch {
                        // Fail safe: treat it as referenced, and abort the sweep below.
                        lookupError = error
                        return true
                    }
                }
                if let lookupError { throw lookupError }
                for blob in plan.blockRows { try database.run("DELETE FROM blocks WHERE blob = ?", [.text(blob.hex)]) }
                for id in plan.uploadRows { try database.run("DELETE FROM uploads WHERE id = ?", [.text(id)]) }
                try database.run("DELETE FROM completions WHERE expires_at <= ?", [.integer(now)])
                return plan
            }
        }
    }

    /// See `SweepIndex.knownBlobs()`.
    public func knownBlobs() async throws -> Set<BlobID> {
        try await perform { database in
            let rows = try database.query(
                "SELECT blob FROM blocks UNION SELECT blob FROM segments UNION SELECT blob FROM parts")
            return Set(try rows.map { try Rows.blobID($0.text(0)) })
        }
    }
}
