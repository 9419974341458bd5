import NativeStore
public import Outbox

extension SQLiteUpIndex: MultipartIndex {
    static let uploadColumns = "id, bucket, object_key, state, expires_at, created_at"
    static let partColumns = "upload_id, part_number, blob, size, md5, etag, digest, put_time, sniffed_type"

    /// See `MultipartIndex.createUpload(bucket:key:expiresAt:createdAt:)`.
    public func createUpload(bucket: String, key: String?, expiresAt: Int64, createdAt: Int64) async throws
        -> MultipartUpload
    {
        let upload = MultipartUpload(
            id: UpIndexRules.newUploadID(), bucket: bucket, key: key, expiresAt: expiresAt, createdAt: createdAt,
            state: .active)
        try await perform { database in
            try database.run(
                "INSERT INTO uploads (\(Self.uploadColumns)) VALUES (?, ?, ?, 'active', ?, ?)",
                [
                    .text(upload.id), .text(bucket), key.map { .text($0) } ?? .null, .integer(expiresAt),
                    .integer(createdAt),
                ])
        }
        return upload
    }

    /// See `MultipartIndex.upload(id:)`.
    public func upload(id: String) async throws -> MultipartUpload? {
        try await perform { try Self.upload(id, in: $0) }
    }

    static func upload(_ id: String, in database: SQLiteDatabase) throws -> MultipartUpload? {
        try database.query("SELECT \(uploadColumns) FROM uploads WHERE id = ?", [.text(id)]).first.map(Rows.upload)
    }

    static func parts(_ id: String, in database: SQLiteDatabase) throws -> [Int: UploadPart] {
        let rows = try database.query("SELECT \(partColumns) FROM parts WHERE upload_id = ?", [.text(id)])
        return Dictionary(uniqueKeysWithValues: try rows.map(Rows.part).map { ($0.partNumber, $0) })
    }

    /// See `MultipartIndex.putPart(_:now:)`.
    public func putPart(_ part: UploadPart, now: Int64) async throws -> BlobID? {
        try UpIndexRules.checkPartNumber(part.partNumber)
        return try await perform { database in
            try database.transaction {
                guard let upload = try Self.upload(part.uploadID, in: database), upload.isUsable(now: now) else {
                    throw UpIndexError.noSuchUpload
                }
                let old = try database.query(
                    "SELECT blob FROM parts WHERE upload_id = ? AND part_number = ?",
                    [.text(part.uploadID), .integer(Int64(part.partNumber))]
                ).first.map { try Rows.blobID($0.text(0)) }
                try database.run(
                    "INSERT OR REPLACE INTO parts (\(Self.partColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        .text(part.uploadID), .integer(Int64(part.partNumber)), .text(part.blob.hex), .integer(part.size),
                        .text(part.md5), .text(part.etag), .blob(part.digest), .integer(part.putTime),
                        SniffedTypeColumn.text(part.sniffedType).map { .text($0) } ?? .null,
                    ])
                guard let old, old != part.blob else { return nil }
                return try Self.unreferenced([old], in: database).first
            }
        }
    }

    /// See `MultipartIndex.listParts(uploadID:marker:max:)`.
    public func listParts(uploadID: String, marker: Int, max: Int) async throws -> PartListing {
        let limit = UpIndexRules.clampMaxParts(max)
        return try await perform { database in
            // One row more than the page tells whether there is a next page.
            let parts = try database.query(
                """
                SELECT \(Self.partColumns) FROM parts WHERE upload_id = ? AND part_number > ?
                ORDER BY part_number LIMIT ?
                """,
                [.text(uploadID), .integer(Int64(marker)), .integer(Int64(limit + 1))]
            ).map(Rows.part)
            let page = Array(parts.prefix(limit))
            return PartListing(parts: page, nextMarker: parts.count > limit ? page.last?.partNumber ?? 0 : 0)
        }
    }

    /// See `MultipartIndex.completeUpload(_:parts:object:mode:completion:callback:now:)`.
    public func completeUpload(
        _ id: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?,
        callback: OutboxMessage?, now: Int64
    ) async throws -> PutObjectOutcome {
        try await perform { database in
            try database.transaction {
                if let completion, let existing = try Self.completion(completion.key, in: database) {
                    return .alreadyCompleted(existing)
                }
                guard let upload = try Self.upload(id, in: database), upload.isUsable(now: now) else {
                    throw UpIndexError.noSuchUpload
                }
                let stored = try Self.parts(id, in: database)
                _ = try UpIndexRules.matchParts(parts, stored: stored, segments: object.segments)
                try database.run("UPDATE uploads SET state = 'completed' WHERE id = ?", [.text(upload.id)])
                try database.run("DELETE FROM parts WHERE upload_id = ?", [.text(upload.id)])
                return try Self.store(
                    object, mode: mode, completion: completion, callback: callback,
                extraReleased: stored.values.map(\.blob),
                    in: database)
            }
        }
    }

    /// See `MultipartIndex.abortUpload(_:)`.
    public func abortUpload(_ id: String) async throws -> [BlobID] {
        try await perform { database in
            try database.transaction { try Self.end(id, as: .aborted, in: database) }
        }
    }

    /// See `MultipartIndex.retireUpload(_:recording:)`.
    public func retireUpload(_ id: String, recording completion: Completion) async throws -> [BlobID] {
        try await perform { database in
            try database.transaction {
                let blobs = try Self.end(id, as: .completed, in: database)
                try database.run(
                    "INSERT OR IGNORE INTO completions (\(Self.completionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        .text(completion.key.bucket), .blob(completion.key.requestSHA1), .text(completion.objectKey),
                        .text(completion.etag), completion.result.map { .text($0) } ?? .null,
                        .integer(completion.expiresAt), completion.outboxID.map { .integer($0) } ?? .null,
                    ])
                return blobs
            }
        }
    }

    /// Moves an active upload to `state` and drops its parts (inside the caller's transaction).
    ///
    /// - Returns: The parts' blobs that nothing else references.
    /// - Throws: `UpIndexError.noSuchUpload` unless the upload is active.
    private static func end(_ id: String, as state: MultipartUpload.State, in database: SQLiteDatabase) throws -> [BlobID] {
        guard let upload = try upload(id, in: database), upload.state == .active else { throw UpIndexError.noSuchUpload }
        let blobs = try parts(id, in: database).values.map(\.blob)
        try database.run("UPDATE uploads SET state = ? WHERE id = ?", [.text(state.rawValue), .text(upload.id)])
        try database.run("DELETE FROM parts WHERE upload_id = ?", [.text(upload.id)])
        return try unreferenced(blobs, in: database)
    }
}
