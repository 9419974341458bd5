import NativePostgres
public import Outbox

extension PostgresUpIndex: ObjectIndex {
    /// See `ObjectIndex.putObject(_:mode:completion:callback:)`.
    public func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?
    ) async throws -> PutObjectOutcome {
        try await transaction { connection in
            if let completion {
                // A repeat of this mkfile on another instance waits here for the first one's
                // commit, then finds its completion.
                try Self.lockName(Self.completionLock(completion.key), on: connection)
                if let existing = try Self.completion(completion.key, on: connection) { return .alreadyCompleted(existing) }
            }
            return try Self.store(
                object, mode: mode, completion: completion, callback: callback, extraReleased: [], on: connection)
        }
    }

    /// The body of `putObject`, shared with `completeUpload`; runs inside their transaction.
    /// The object's name is locked first, so of two insertOnly puts of one key exactly one finds
    /// it free, and versions count up without gaps; then the outbox row, then the completion
    /// naming it, so a refused outbox row rolls back the object already written.
    static func store(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?,
        extraReleased: [BlobID], on connection: PostgresConnection
    ) throws -> PutObjectOutcome {
        try lockName(objectLock(bucket: object.bucket, key: object.key), on: connection)
        let name: [PostgresValue] = [.text(object.bucket), .text(object.key)]
        let old = try Self.object(bucket: object.bucket, key: object.key, on: connection)
        if mode == .insertOnly, old != nil { throw UpIndexError.objectExists }
        var stored = object
        stored.version = (old?.version ?? 0) + 1
        // Segments go with their object (ON DELETE CASCADE). Under the name's lock, no object
        // of this name can appear after `old` was read as none. The writes below are queued:
        // they travel with the outbox row's INSERT or with COMMIT.
        if old != nil { try connection.queue("DELETE FROM objects WHERE bucket = $1 AND object_key = $2", name) }
        try insert(stored, on: connection)
        let entry = try callback.map {
            try PostgresOutbox.insert($0, now: object.putTime, into: CallbackMessage.table, on: connection)
        }
        if let completion {
            // Names its callback's entry, so a repeat follows that entry instead of delivering again.
            try connection.queue(
                "INSERT INTO completions (\(SQLiteUpIndex.completionColumns)) VALUES ($1, $2, $3, $4, NULL, $5, $6)",
                [
                    .text(completion.key.bucket), .bytes(completion.key.requestSHA1), .text(object.key),
                    .text(object.etag), .integer(completion.expiresAt), PostgresValue(entry?.id),
                ])
        }
        let released = try unreferenced((old?.segments.map(\.blob) ?? []) + extraReleased, on: connection)
        return .stored(object: stored, releasedBlobs: released, callback: entry)
    }

    /// Writes the rows of `object` — its row, `version` as given, and its segments — where no
    /// object of its name is: the one INSERT of an object, shared by ``store(_:mode:completion:callback:extraReleased:on:)``
    /// and `up-server migrate` (``MigrateCommand``), which copies objects with their versions.
    static func insert(_ object: StoredObject, on connection: PostgresConnection) throws {
        let name: [PostgresValue] = [.text(object.bucket), .text(object.key)]
        try connection.queue(
            "INSERT INTO objects (\(SQLiteUpIndex.objectColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            name + [
                .text(object.etag), .integer(object.fsize), .text(object.mimeType),
                .text(SQLiteUpIndex.Rows.metadataText(object.metadata)), .integer(object.putTime),
                PostgresValue(object.deleteAfterDays), .integer(Int64(object.fileType)), .integer(object.version),
            ])
        for (position, segment) in object.segments.enumerated() {
            try connection.queue(
                "INSERT INTO segments (bucket, object_key, position, blob, length) VALUES ($1, $2, $3, $4, $5)",
                name + [.integer(Int64(position)), .text(segment.blob.hex), .integer(segment.length)])
        }
    }

    /// See `ObjectIndex.object(bucket:key:)`.
    public func object(bucket: String, key: String) async throws -> StoredObject? {
        // One snapshot for the row and its segments, so a concurrent replace is seen whole or not at all.
        try await pool.transaction(isolation: .repeatableRead) { try Self.object(bucket: bucket, key: key, on: $0) }
    }

    static func object(bucket: String, key: String, on connection: PostgresConnection) throws -> StoredObject? {
        let name: [PostgresValue] = [.text(bucket), .text(key)]
        guard let row = try connection.query(
            "SELECT \(SQLiteUpIndex.objectColumns) FROM objects WHERE bucket = $1 AND object_key = $2", name
        ).first else { return nil }
        let segments = try connection.query(
            "SELECT blob, length FROM segments WHERE bucket = $1 AND object_key = $2 ORDER BY position", name
        ).rows.map { Segment(blob: try Rows.blobID($0.decode(0)), length: try $0.decode(1)) }
        return try Rows.object(row, segments: segments)
    }

    /// See `ObjectIndex.deleteObject(bucket:key:)`.
    public func deleteObject(bucket: String, key: String) async throws -> [BlobID]? {
        try await transaction { connection in
            try Self.lockName(Self.objectLock(bucket: bucket, key: key), on: connection)
            guard let old = try Self.object(bucket: bucket, key: key, on: connection) else { return nil }
            try connection.query("DELETE FROM objects WHERE bucket = $1 AND object_key = $2", [.text(bucket), .text(key)])
            return try Self.unreferenced(old.segments.map(\.blob), on: connection)
        }
    }

    /// See `ObjectIndex.completion(_:)`.
    public func completion(_ key: CompletionKey) async throws -> Completion? {
        try await connection { try Self.completion(key, on: $0) }
    }

    static func completion(_ key: CompletionKey, on connection: PostgresConnection) throws -> Completion? {
        try connection.query(
            "SELECT \(SQLiteUpIndex.completionColumns) FROM completions WHERE bucket = $1 AND request_sha1 = $2",
            [.text(key.bucket), .bytes(key.requestSHA1)]
        ).first.map(Rows.completion)
    }

    /// See `ObjectIndex.recordCompletionResult(_:result:)`.
    public func recordCompletionResult(_ key: CompletionKey, result: String) async throws -> String? {
        try await connection { connection in
            // First writer wins (the row lock makes a concurrent second one re-check `result IS
            // NULL` and change nothing); the RETURNING of the COALESCE hands back the first answer.
            try connection.query(
                """
                UPDATE completions SET result = coalesce(result, $1) WHERE bucket = $2 AND request_sha1 = $3
                RETURNING result
                """,
                [.text(result), .text(key.bucket), .bytes(key.requestSHA1)]
            ).first?.decode(0, as: String?.self) ?? nil
        }
    }
}
