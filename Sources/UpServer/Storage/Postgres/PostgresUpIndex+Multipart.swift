import NativePostgres
public import Outbox

extension PostgresUpIndex: MultipartIndex {
    /// See `MultipartIndex.createUpload(bucket:key:expiresAt:createdAt:)`.
    public func createUpload(bucket: String, key: String?, expiresAt: Int64, createdAt: Int64) async throws
        -> MultipartUpload
    {
        let upload = MultipartUpload(
            id: UpIndexRules.newUploadID(), bucket: bucket, key: key, expiresAt: expiresAt, createdAt: createdAt,
            state: .active)
        _ = try await connection { connection in
            try connection.query(
                "INSERT INTO uploads (\(SQLiteUpIndex.uploadColumns)) VALUES ($1, $2, $3, 'active', $4, $5)",
                [.text(upload.id), .text(bucket), PostgresValue(key), .integer(expiresAt), .integer(createdAt)])
        }
        return upload
    }

    /// See `MultipartIndex.upload(id:)`.
    public func upload(id: String) async throws -> MultipartUpload? {
        try await connection { try Self.upload(id, on: $0) }
    }

    /// The upload row; with `lock`, locked `FOR UPDATE` until the transaction ends, so parts,
    /// complete, abort and the sweep change one upload one at a time, whichever instance runs them.
    static func upload(_ id: String, lock: Bool = false, on connection: PostgresConnection) throws -> MultipartUpload? {
        try connection.query(
            "SELECT \(SQLiteUpIndex.uploadColumns) FROM uploads WHERE id = $1\(lock ? " FOR UPDATE" : "")", [.text(id)]
        ).first.map(Rows.upload)
    }

    static func parts(_ id: String, on connection: PostgresConnection) throws -> [Int: UploadPart] {
        let rows = try connection.query("SELECT \(SQLiteUpIndex.partColumns) FROM parts WHERE upload_id = $1", [.text(id)])
        return Dictionary(uniqueKeysWithValues: try rows.rows.map(Rows.part).map { ($0.partNumber, $0) })
    }

    /// See `MultipartIndex.putPart(_:now:)`.
    public func putPart(_ part: UploadPart, now: Int64) async throws -> BlobID? {
        try UpIndexRules.checkPartNumber(part.partNumber)
        return try await transaction { connection in
            guard let upload = try Self.upload(part.uploadID, lock: true, on: connection), upload.isUsable(now: now) else {
                throw UpIndexError.noSuchUpload
            }
            let old = try connection.query(
                "SELECT blob FROM parts WHERE upload_id = $1 AND part_number = $2",
                [.text(part.uploadID), .integer(Int64(part.partNumber))]
            ).first.map { try Rows.blobID($0.decode(0)) }
            try connection.query(
                """
                INSERT INTO parts (\(SQLiteUpIndex.partColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                ON CONFLICT (upload_id, part_number) DO UPDATE SET blob = excluded.blob, size = excluded.size,
                    md5 = excluded.md5, etag = excluded.etag, digest = excluded.digest, put_time = excluded.put_time,
                    sniffed_type = excluded.sniffed_type
                """,
                [
                    .text(part.uploadID), .integer(Int64(part.partNumber)), .text(part.blob.hex), .integer(part.size),
                    .text(part.md5), .text(part.etag), .bytes(part.digest), .integer(part.putTime),
                    PostgresValue(SniffedTypeColumn.text(part.sniffedType)),
                ])
            guard let old, old != part.blob else { return nil }
            return try Self.unreferenced([old], on: connection).first
        }
    }

    /// See `MultipartIndex.listParts(uploadID:marker:max:)`.
    public func listParts(uploadID: String, marker: Int, max: Int) async throws -> PartListing {
        let limit = UpIndexRules.clampMaxParts(max)
        return try await connection { connection in
            // One row more than the page tells whether there is a next page.
            let parts = try connection.query(
                """
                SELECT \(SQLiteUpIndex.partColumns) FROM parts WHERE upload_id = $1 AND part_number > $2
                ORDER BY part_number LIMIT $3
                """,
                [.text(uploadID), .integer(Int64(marker)), .integer(Int64(limit + 1))]
            ).rows.map(Rows.part)
            let page = Array(parts.prefix(limit))
            return PartListing(parts: page, nextMarker: parts.count > limit ? page.last?.partNumber ?? 0 : 0)
        }
    }

    /// See `MultipartIndex.completeUpload(_:parts:object:mode:completion:callback:now:)`.
    public func completeUpload(
        _ id: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?,
        callback: OutboxMessage?, now: Int64
    ) async throws -> PutObjectOutcome {
        try await transaction { connection in
            if let completion {
                try Self.lockName(Self.completionLock(completion.key), on: connection)
                if let existing = try Self.completion(completion.key, on: connection) { return .alreadyCompleted(existing) }
            }
            // Locked: two instances completing the same upload at once assemble it once.
            guard let upload = try Self.upload(id, lock: true, on: connection), upload.isUsable(now: now) else {
                throw UpIndexError.noSuchUpload
            }
            let stored = try Self.parts(id, on: connection)
            _ = try UpIndexRules.matchParts(parts, stored: stored, segments: object.segments)
            try connection.query("UPDATE uploads SET state = 'completed' WHERE id = $1", [.text(upload.id)])
            try connection.query("DELETE FROM parts WHERE upload_id = $1", [.text(upload.id)])
            return try Self.store(
                object, mode: mode, completion: completion, callback: callback, extraReleased: stored.values.map(\.blob),
                on: connection)
        }
    }

    /// See `MultipartIndex.abortUpload(_:)`.
    public func abortUpload(_ id: String) async throws -> [BlobID] {
        try await transaction { try Self.end(id, as: .aborted, on: $0) }
    }

    /// See `MultipartIndex.retireUpload(_:recording:)`.
    public func retireUpload(_ id: String, recording completion: Completion) async throws -> [BlobID] {
        try await transaction { connection in
            try Self.lockName(Self.completionLock(completion.key), on: connection)
            let blobs = try Self.end(id, as: .completed, on: connection)
            try connection.query(
                """
                INSERT INTO completions (\(SQLiteUpIndex.completionColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT DO NOTHING
                """,
                [
                    .text(completion.key.bucket), .bytes(completion.key.requestSHA1), .text(completion.objectKey),
                    .text(completion.etag), PostgresValue(completion.result), .integer(completion.expiresAt),
                    PostgresValue(completion.outboxID),
                ])
            return blobs
        }
    }

    /// Moves an active upload to `state` and drops its parts (inside the caller's transaction).
    ///
    /// - Returns: The parts' blobs that nothing else references.
    /// - Throws: `UpIndexError.noSuchUpload` unless the upload is active.
    private static func end(_ id: String, as state: MultipartUpload.State, on connection: PostgresConnection) throws
        -> [BlobID]
    {
        guard let upload = try upload(id, lock: true, on: connection), upload.state == .active else {
            throw UpIndexError.noSuchUpload
        }
        let blobs = try parts(id, on: connection).values.map(\.blob)
        try connection.query("UPDATE uploads SET state = $1 WHERE id = $2", [.text(state.rawValue), .text(upload.id)])
        try connection.query("DELETE FROM parts WHERE upload_id = $1", [.text(upload.id)])
        return try unreferenced(blobs, on: connection)
    }
}
