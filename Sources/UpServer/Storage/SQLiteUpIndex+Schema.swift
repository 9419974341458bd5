extension SQLiteUpIndex {
    /// Schema history, applied in order by `SQLiteDatabase.migrate`; only ever append.
    ///
    /// Times are Unix seconds. Blob ids are the 32-hex `BlobID` text. Object segments have a
    /// table of their own (not a JSON column) so "is this blob part of any object?" — asked on
    /// every replace, delete and sweep — is an index lookup (`segments_blob`).
    static let migrations = [
        """
        CREATE TABLE blocks (
            blob TEXT PRIMARY KEY,
            block_size INTEGER NOT NULL CHECK (block_size BETWEEN 1 AND 4194304),  -- §4.1
            received INTEGER NOT NULL CHECK (received BETWEEN 0 AND block_size),  -- acknowledged offset
            crc32 INTEGER NOT NULL,                                                -- of bytes so far
            sha1 BLOB CHECK (sha1 IS NULL OR length(sha1) = 20),                   -- set when complete
            expires_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX blocks_expiry ON blocks (expires_at);

        CREATE TABLE objects (
            bucket TEXT NOT NULL,
            object_key TEXT NOT NULL,
            etag TEXT NOT NULL,
            fsize INTEGER NOT NULL,
            mime_type TEXT NOT NULL,
            metadata TEXT NOT NULL,            -- JSON object of x-qn-meta-* pairs
            put_time INTEGER NOT NULL,
            delete_after_days INTEGER,
            file_type INTEGER NOT NULL,
            version INTEGER NOT NULL,
            PRIMARY KEY (bucket, object_key)
        ) STRICT;
        CREATE TABLE segments (
            bucket TEXT NOT NULL,
            object_key TEXT NOT NULL,
            position INTEGER NOT NULL,
            blob TEXT NOT NULL,
            length INTEGER NOT NULL,
            PRIMARY KEY (bucket, object_key, position),
            FOREIGN KEY (bucket, object_key) REFERENCES objects (bucket, object_key) ON DELETE CASCADE
        ) STRICT;
        CREATE INDEX segments_blob ON segments (blob);

        CREATE TABLE completions (
            bucket TEXT NOT NULL,
            request_sha1 BLOB NOT NULL,
            object_key TEXT NOT NULL,
            etag TEXT NOT NULL,
            result TEXT,                       -- JSON answer, recorded once
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (bucket, request_sha1)
        ) STRICT;

        CREATE TABLE uploads (
            id TEXT PRIMARY KEY,
            bucket TEXT NOT NULL,
            object_key TEXT,                   -- NULL for `~` (§5)
            state TEXT NOT NULL CHECK (state IN ('active', 'completed', 'aborted')),
            expires_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX uploads_expiry ON uploads (expires_at);
        CREATE TABLE parts (
            upload_id TEXT NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
            part_number INTEGER NOT NULL CHECK (part_number BETWEEN 1 AND 10000),
            blob TEXT NOT NULL,
            size INTEGER NOT NULL,
            md5 TEXT NOT NULL,
            etag TEXT NOT NULL,
            digest BLOB NOT NULL,              -- §7.2 part digest
            put_time INTEGER NOT NULL,
            PRIMARY KEY (upload_id, part_number)
        ) STRICT;
        CREATE INDEX parts_blob ON parts (blob);

        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            bucket TEXT NOT NULL,
            object_key TEXT NOT NULL,
            etag TEXT NOT NULL,
            urls TEXT NOT NULL CHECK (json_valid(urls) AND json_array_length(urls) > 0),
            host TEXT,
            body TEXT NOT NULL,
            content_type TEXT NOT NULL,
            auth_scheme TEXT NOT NULL,
            first_attempt_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            last_error TEXT,
            state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
            reply TEXT
        ) STRICT;
        CREATE INDEX outbox_due ON outbox (state, next_attempt_at, id);
        """
    ]
}
