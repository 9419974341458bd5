import Outbox

extension SQLiteUpIndex {
    /// Schema history, applied in order by `SQLiteDatabase.migrate`; only ever append.
    ///
    /// Times are Unix seconds. Blob ids are the 32-hex `BlobID` text. Object segments have a
    /// table of their own (not a JSON column) so "is this blob part of any object?" — asked on
    /// every replace, delete and sweep — is an index lookup (`segments_blob`).
    static let migrations = [schemaV1, callbackOutboxV2, completionOutboxV3, lifecycleV4, blockSniffV5, partSniffV6]

    /// The first schema: blocks, objects and their segments, completions, uploads and parts, and
    /// the first outbox (replaced by migration 2).
    static let schemaV1 =
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

    /// Migration 2: the callback outbox becomes the shared `Outbox` table (`callback_outbox`,
    /// claimed with a lease, issue 9) and the old rows move into it, nothing lost:
    /// - the payload is `CallbackMessage` as JSON, built from the old columns;
    /// - `failed` is `dead`; a `pending` row is due at its `next_attempt_at`;
    /// - the lease is 5 s per URL + 5 s (the default timeout; the configuration is not known here);
    /// - `attempts` keeps the attempts made (the next claim counts the next one).
    static let callbackOutboxV2 = SQLiteOutbox.migrations(table: CallbackMessage.table)[0] + """

        INSERT INTO callback_outbox (id, payload, lease_seconds, state, available_at, owner, attempts, last_error,
                                     reply, created_at)
        SELECT id,
               json_object('bucket', bucket, 'etag', etag, 'key', object_key,
                           'request', json_object('authScheme', auth_scheme, 'body', body, 'contentType', content_type,
                                                  'host', host, 'urls', json(urls))),
               5 * json_array_length(urls) + 5,
               CASE state WHEN 'failed' THEN 'dead' ELSE state END,
               CASE state WHEN 'pending' THEN next_attempt_at END,
               NULL, attempts, last_error, reply, first_attempt_at
        FROM outbox;
        DROP TABLE outbox;
        """

    /// Migration 3: a completion names the outbox entry of the callback stored with it, so a
    /// repeated mkfile or complete whose first answer is unknown takes the callback's outcome from
    /// that entry instead of delivering it a second time. Older rows keep NULL (their repeat
    /// delivers beside the entry, as before).
    static let completionOutboxV3 = "ALTER TABLE completions ADD COLUMN outbox_id INTEGER;"

    /// Migration 4: the lifecycle sweep finds expired objects through an index on the same
    /// expression its query uses (`SQLiteUpIndex+Catalog.swift`), over rows with a rule only.
    static let lifecycleV4 = """
        CREATE INDEX objects_expiry ON objects ((put_time + delete_after_days * 86400))
            WHERE delete_after_days IS NOT NULL;
        """

    /// What mkblk sniffed the block's first bytes as (`BlockRecord.sniffedType`): NULL for rows
    /// from before, which mkfile sniffs by reading the bytes, as it always did.
    static let blockSniffV5 = "ALTER TABLE blocks ADD COLUMN sniffed_type TEXT;"

    /// The same for v2 parts (`UploadPart.sniffedType`): NULL for rows from before, which
    /// complete sniffs by reading the bytes.
    static let partSniffV6 = "ALTER TABLE parts ADD COLUMN sniffed_type TEXT;"
}
