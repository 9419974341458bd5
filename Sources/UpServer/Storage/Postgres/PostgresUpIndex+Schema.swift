import Outbox

extension PostgresUpIndex {
    /// Schema history, applied in order by ``migrate()``; only ever append.
    ///
    /// The tables are `SQLiteUpIndex`'s (same names, columns and constraints), so the two read
    /// alike and a migration tool can copy rows across one for one. Times are Unix seconds in
    /// `bigint`; blob ids are the 32-hex `BlobID` text; hashes are `bytea`.
    /// (The last two are SQLite's migrations 5 and 6, the same `ALTER TABLE`s.)
    static let migrations = [
        schemaV1, PostgresOutbox.migrations(table: CallbackMessage.table)[0], catalogV3, SQLiteUpIndex.blockSniffV5,
        SQLiteUpIndex.partSniffV6,
    ]

    /// Blocks, objects and their segments, completions, uploads and parts.
    static let schemaV1 =
        """
        CREATE TABLE blocks (
            blob text PRIMARY KEY,
            block_size bigint NOT NULL CHECK (block_size BETWEEN 1 AND 4194304),  -- §4.1
            received bigint NOT NULL CHECK (received BETWEEN 0 AND block_size),  -- acknowledged offset
            crc32 bigint NOT NULL,                                               -- of the bytes so far
            sha1 bytea CHECK (sha1 IS NULL OR length(sha1) = 20),                -- set when complete
            expires_at bigint NOT NULL,
            created_at bigint NOT NULL
        );
        CREATE INDEX blocks_expiry ON blocks (expires_at);

        CREATE TABLE objects (
            bucket text NOT NULL,
            object_key text NOT NULL,
            etag text NOT NULL,
            fsize bigint NOT NULL,
            mime_type text NOT NULL,
            metadata text NOT NULL,            -- JSON object of x-qn-meta-* pairs
            put_time bigint NOT NULL,
            delete_after_days integer,
            file_type integer NOT NULL,
            version bigint NOT NULL,
            PRIMARY KEY (bucket, object_key)
        );
        CREATE TABLE segments (
            bucket text NOT NULL,
            object_key text NOT NULL,
            position integer NOT NULL,
            blob text NOT NULL,
            length bigint NOT NULL,
            PRIMARY KEY (bucket, object_key, position),
            FOREIGN KEY (bucket, object_key) REFERENCES objects (bucket, object_key) ON DELETE CASCADE
        );
        CREATE INDEX segments_blob ON segments (blob);

        CREATE TABLE completions (
            bucket text NOT NULL,
            request_sha1 bytea NOT NULL,
            object_key text NOT NULL,
            etag text NOT NULL,
            result text,                       -- JSON answer, recorded once
            expires_at bigint NOT NULL,
            outbox_id bigint,                  -- the callback's outbox entry, if it had one
            PRIMARY KEY (bucket, request_sha1)
        );
        CREATE INDEX completions_expiry ON completions (expires_at);

        CREATE TABLE uploads (
            id text PRIMARY KEY,
            bucket text NOT NULL,
            object_key text,                   -- NULL for `~` (§5)
            state text NOT NULL CHECK (state IN ('active', 'completed', 'aborted')),
            expires_at bigint NOT NULL,
            created_at bigint NOT NULL
        );
        CREATE INDEX uploads_expiry ON uploads (expires_at);
        CREATE TABLE parts (
            upload_id text NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
            part_number integer NOT NULL CHECK (part_number BETWEEN 1 AND 10000),
            blob text NOT NULL,
            size bigint NOT NULL,
            md5 text NOT NULL,
            etag text NOT NULL,
            digest bytea NOT NULL,             -- §7.2 part digest
            put_time bigint NOT NULL,
            PRIMARY KEY (upload_id, part_number)
        );
        CREATE INDEX parts_blob ON parts (blob);
        """

    /// Migration 3 (what `SQLiteUpIndex`'s migration 4 is, for the storage API): the lifecycle
    /// sweep finds expired objects through an index on the same expression its query uses
    /// (`PostgresUpIndex+Catalog.swift`), over rows with a rule only; listing walks keys in byte
    /// order (`COLLATE "C"`, SQLite's BINARY) whatever collation the database was created with.
    static let catalogV3 = """
        CREATE INDEX objects_expiry ON objects ((put_time + delete_after_days * 86400::bigint))
            WHERE delete_after_days IS NOT NULL;
        CREATE INDEX objects_key_c ON objects (bucket, object_key COLLATE "C");
        """
}
