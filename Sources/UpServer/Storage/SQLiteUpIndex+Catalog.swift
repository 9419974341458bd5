import NativeStore

extension SQLiteUpIndex: ObjectCatalog {
    /// See `ObjectCatalog.listObjects(bucket:from:below:limit:)`.
    public func listObjects(bucket: String, from: String, below: String?, limit: Int) async throws -> [StoredObject] {
        try await perform { database in
            var sql = "SELECT object_key FROM objects WHERE bucket = ? AND object_key >= ?"
            var values: [SQLiteValue] = [.text(bucket), .text(from)]
            if let below {
                sql += " AND object_key < ?"
                values.append(.text(below))
            }
            values.append(.integer(Int64(max(limit, 0))))
            let keys = try database.query(sql + " ORDER BY object_key LIMIT ?", values).map { try $0.text(0) }
            return try keys.compactMap { try Self.object(bucket: bucket, key: $0, in: database) }
        }
    }

    /// See `ObjectCatalog.copyObject(from:to:mode:putTime:removeSource:)`.
    public func copyObject(
        from source: ObjectName, to destination: ObjectName, mode: PutMode, putTime: Int64?, removeSource: Bool
    ) async throws -> [BlobID]? {
        try await perform { database in
            try database.transaction {
                guard let original = try Self.object(bucket: source.bucket, key: source.key, in: database) else {
                    return nil
                }
                guard let object = try original.copied(to: destination, mode: mode, putTime: putTime) else { return [] }
                if removeSource {
                    // The segments go with the row (ON DELETE CASCADE); the copy names them again below.
                    try database.run(
                        "DELETE FROM objects WHERE bucket = ? AND object_key = ?", [.text(source.bucket), .text(source.key)])
                }
                let outcome = try Self.store(
                    object, mode: mode, completion: nil, callback: nil, extraReleased: [], in: database)
                guard case .stored(_, let released, _) = outcome else { return [] }
                return released
            }
        }
    }

    /// See `ObjectCatalog.changeObject(_:_:)`.
    public func changeObject(_ name: ObjectName, _ change: ObjectChange) async throws -> StoredObject? {
        try await perform { database in
            try database.transaction {
                guard let old = try Self.object(bucket: name.bucket, key: name.key, in: database) else { return nil }
                let new = change.applied(to: old)
                try database.run(
                    "UPDATE objects SET mime_type = ?, metadata = ?, delete_after_days = ? WHERE bucket = ? AND object_key = ?",
                    [
                        .text(new.mimeType), .text(Rows.metadataText(new.metadata)),
                        new.deleteAfterDays.map { .integer(Int64($0)) } ?? .null, .text(name.bucket), .text(name.key),
                    ])
                return new
            }
        }
    }

    /// See `SweepIndex.deleteExpiredObjects(now:limit:)`. The expression is the one
    /// `objects_expiry` indexes, and `StoredObject.expiresAt` computes.
    public func deleteExpiredObjects(now: Int64, limit: Int) async throws -> ExpiredObjects {
        try await perform { database in
            try database.transaction {
                let rows = try database.query(
                    """
                    SELECT bucket, object_key FROM objects
                    WHERE delete_after_days IS NOT NULL AND put_time + delete_after_days * 86400 <= ?
                    ORDER BY put_time + delete_after_days * 86400, bucket, object_key LIMIT ?
                    """, [.integer(now), .integer(Int64(max(limit, 0)))])
                var expired = ExpiredObjects()
                var blobs: [BlobID] = []
                for row in rows {
                    let name = ObjectName(bucket: try row.text(0), key: try row.text(1))
                    blobs += try database.query(
                        "SELECT blob FROM segments WHERE bucket = ? AND object_key = ?",
                        [.text(name.bucket), .text(name.key)]
                    ).map { try Rows.blobID($0.text(0)) }
                    try database.run(
                        "DELETE FROM objects WHERE bucket = ? AND object_key = ?", [.text(name.bucket), .text(name.key)])
                    expired.names.append(name)
                }
                expired.blobs = try Self.unreferenced(blobs, in: database)
                return expired
            }
        }
    }
}
