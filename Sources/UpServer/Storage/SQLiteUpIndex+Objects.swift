import NativeStore
public import Outbox

extension SQLiteUpIndex: ObjectIndex {
    static let objectColumns = """
        bucket, object_key, etag, fsize, mime_type, metadata, put_time, delete_after_days, file_type, version
        """
    static let completionColumns = "bucket, request_sha1, object_key, etag, result, expires_at, outbox_id"

    /// See `ObjectIndex.putObject(_:mode:completion:callback:)`.
    public func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?
    ) async throws -> PutObjectOutcome {
        try await perform { database in
            try database.transaction {
                if let completion, let existing = try Self.completion(completion.key, in: database) {
                    return .alreadyCompleted(existing)
                }
                return try Self.store(
                    object, mode: mode, completion: completion, callback: callback, extraReleased: [], in: database)
            }
        }
    }

    /// The body of `putObject`, shared with `completeUpload`; runs inside their transaction.
    /// The object goes in first, then the outbox row, then the completion that names it, so a
    /// refused outbox row (a CHECK of its table) rolls back an object that was already written —
    /// what the atomicity test relies on.
    static func store(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?,
        extraReleased: [BlobID], in database: SQLiteDatabase
    ) throws -> PutObjectOutcome {
        let name: [SQLiteValue] = [.text(object.bucket), .text(object.key)]
        let old = try Self.object(bucket: object.bucket, key: object.key, in: database)
        if mode == .insertOnly, old != nil { throw UpIndexError.objectExists }
        var stored = object
        stored.version = (old?.version ?? 0) + 1
        // Segments go with their object (ON DELETE CASCADE).
        try database.run("DELETE FROM objects WHERE bucket = ? AND object_key = ?", name)
        try database.run(
            "INSERT INTO objects (\(objectColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            name + [
                .text(stored.etag), .integer(stored.fsize), .text(stored.mimeType), .text(Rows.metadataText(stored.metadata)),
                .integer(stored.putTime), stored.deleteAfterDays.map { .integer(Int64($0)) } ?? .null,
                .integer(Int64(stored.fileType)), .integer(stored.version),
            ])
        for (position, segment) in stored.segments.enumerated() {
            try database.run(
                "INSERT INTO segments (bucket, object_key, position, blob, length) VALUES (?, ?, ?, ?, ?)",
                name + [.integer(Int64(position)), .text(segment.blob.hex), .integer(segment.length)])
        }
        let entry = try callback.map {
            try SQLiteOutbox.insert($0, now: object.putTime, into: CallbackMessage.table, in: database)
        }
        if let completion {
            try database.run(
                "INSERT INTO completions (\(completionColumns)) VALUES (?, ?, ?, ?, NULL, ?, ?)",
                [
                    .text(completion.key.bucket), .blob(completion.key.requestSHA1), .text(object.key), .text(object.etag),
                    .integer(completion.expiresAt), entry.map { .integer($0.id) } ?? .null,
                ])
        }
        let released = try unreferenced((old?.segments.map(\.blob) ?? []) + extraReleased, in: database)
        return .stored(object: stored, releasedBlobs: released, callback: entry)
    }

    /// See `ObjectIndex.object(bucket:key:)`.
    public func object(bucket: String, key: String) async throws -> StoredObject? {
        try await perform { try Self.object(bucket: bucket, key: key, in: $0) }
    }

    static func object(bucket: String, key: String, in database: SQLiteDatabase) throws -> StoredObject? {
        let name: [SQLiteValue] = [.text(bucket), .text(key)]
        guard let row = try database.query(
            "SELECT \(objectColumns) FROM objects WHERE bucket = ? AND object_key = ?", name
        ).first else { return nil }
        let segments = try database.query(
            "SELECT blob, length FROM segments WHERE bucket = ? AND object_key = ? ORDER BY position", name
        ).map { Segment(blob: try Rows.blobID($0.text(0)), length: try $0.integer(1)) }
        return StoredObject(
            bucket: try row.text(0), key: try row.text(1), etag: try row.text(2), fsize: try row.integer(3),
            mimeType: try row.text(4), segments: segments,
            metadata: try Rows.metadata(row.text(5)), putTime: try row.integer(6),
            deleteAfterDays: row[7].integerValue.map { Int($0) }, fileType: Int(try row.integer(8)),
            version: try row.integer(9))
    }

    /// See `ObjectIndex.deleteObject(bucket:key:)`.
    public func deleteObject(bucket: String, key: String) async throws -> [BlobID]? {
        try await perform { database in
            try database.transaction {
                guard let old = try Self.object(bucket: bucket, key: key, in: database) else { return nil }
                try database.run("DELETE FROM objects WHERE bucket = ? AND object_key = ?", [.text(bucket), .text(key)])
                return try Self.unreferenced(old.segments.map(\.blob), in: database)
            }
        }
    }

    /// See `ObjectIndex.completion(_:)`.
    public func completion(_ key: CompletionKey) async throws -> Completion? {
        try await perform { try Self.completion(key, in: $0) }
    }

    static func completion(_ key: CompletionKey, in database: SQLiteDatabase) throws -> Completion? {
        try database.query(
            "SELECT \(completionColumns) FROM completions WHERE bucket = ? AND request_sha1 = ?",
            [.text(key.bucket), .blob(key.requestSHA1)]
        ).first.map(Rows.completion)
    }

    /// See `ObjectIndex.recordCompletionResult(_:result:)`.
    public func recordCompletionResult(_ key: CompletionKey, result: String) async throws -> String? {
        try await perform { database in
            try database.transaction {
                // First writer wins; later ones read the first answer back.
                try database.run(
                    "UPDATE completions SET result = ? WHERE bucket = ? AND request_sha1 = ? AND result IS NULL",
                    [.text(result), .text(key.bucket), .blob(key.requestSHA1)])
                return try Self.completion(key, in: database)?.result
            }
        }
    }
}
