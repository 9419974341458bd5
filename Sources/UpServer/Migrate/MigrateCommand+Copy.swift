public import Foundation
import NativePostgres
import NativeStore
import Outbox

extension MigrateCommand {
    /// What is copied from: the embedded installation in a data directory.
    public struct Source: Sendable {
        /// `<directory>/index.sqlite3`.
        public let index: SQLiteUpIndex
        /// `<directory>/blobs`.
        public let blobs: FileBlockStore

        /// The index and blob files of `directory` (the index is opened, and migrated, as
        /// up-server would).
        public init(directory: URL) throws {
            index = try SQLiteUpIndex(dataDirectory: directory)
            blobs = try FileBlockStore(dataDirectory: directory)
        }
    }

    /// What is copied into: a migrated PostgreSQL index and an S3 blob store.
    public struct Target: Sendable {
        /// The index (``PostgresUpIndex/migrate()`` already run).
        public let index: PostgresUpIndex
        /// The blob store.
        public let blobs: S3BlockStore

        /// A target of these stores.
        public init(index: PostgresUpIndex, blobs: S3BlockStore) {
            self.index = index
            self.blobs = blobs
        }
    }

    /// What one run copied, and found in the source (the rest was there already).
    public struct Summary: Sendable, Equatable {
        /// Blobs written now / named by the index.
        public var blobs = 0, blobsSeen = 0
        /// Objects copied now / found.
        public var objects = 0, objectsSeen = 0
        /// Completion records copied now / found.
        public var completions = 0, completionsSeen = 0
        /// Callbacks (outbox entries: owed, delivered or given up) copied now / found.
        public var callbacks = 0, callbacksSeen = 0
        /// v1 block rows copied now / found.
        public var blocks = 0, blocksSeen = 0
        /// v2 upload rows copied now / found.
        public var uploads = 0, uploadsSeen = 0
        /// v2 part rows copied now / found.
        public var parts = 0, partsSeen = 0

        /// An empty summary.
        public init() {}

        /// The one line the command prints (before its contextSecret reminder).
        public var line: String {
            "migrated \(blobs) of \(blobsSeen) blobs, \(objects) of \(objectsSeen) objects, "
                + "\(completions) of \(completionsSeen) completion records, "
                + "\(callbacks) of \(callbacksSeen) callbacks, \(blocks) of \(blocksSeen) v1 blocks, "
                + "\(uploads) of \(uploadsSeen) v2 uploads with \(parts) of \(partsSeen) parts (the rest were there already)"
        }
    }

    /// Copies `source` into `target`: blobs first, then rows, so no row copied names a blob the
    /// store lacks. See the type's documentation for what is skipped.
    public static func copy(from source: Source, to target: Target) async throws -> Summary {
        var summary = Summary()
        let lengths = try await source.index.perform { sqlite in
            // A blob's length: what its object segment, acknowledged block or part covers.
            try sqlite.query(
                """
                SELECT blob, max(length) FROM (SELECT blob, length FROM segments UNION ALL
                    SELECT blob, received FROM blocks UNION ALL SELECT blob, size FROM parts)
                GROUP BY blob ORDER BY blob
                """
            ).map { (try SQLiteUpIndex.Rows.blobID($0.text(0)), try $0.integer(1)) }
        }
        summary.blobsSeen = lengths.count
        summary.blobs = try await BlockingWork.run {
            try lengths.reduce(0) { copied, blob in
                copied + (try target.blobs.importBlob(blob.0, length: blob.1, from: source.blobs) ? 1 : 0)
            }
        }
        // Callbacks before completions: a completion names its callback's entry by id.
        let entries = try await copyCallbacks(source.index.outbox, into: target.index, summary: &summary)
        (summary.objects, summary.objectsSeen) = try await copyObjects(source.index, into: target.index)
        (summary.completions, summary.completionsSeen) = try await copyRows(
            "completions", SQLiteUpIndex.completionColumns, from: source.index, into: target.index
        ) { values in
            // outbox_id (last): the entry's id in PostgreSQL (every entry is copied; NULL stays NULL).
            var values = values
            values[6] = values[6].integerValue.flatMap { entries[$0] }.map { .integer($0) } ?? .null
            return values
        }
        (summary.blocks, summary.blocksSeen) = try await copyRows(
            "blocks", SQLiteUpIndex.blockColumns, from: source.index, into: target.index)
        (summary.uploads, summary.uploadsSeen) = try await copyRows(
            "uploads", SQLiteUpIndex.uploadColumns, from: source.index, into: target.index)
        (summary.parts, summary.partsSeen) = try await copyRows(
            "parts", SQLiteUpIndex.partColumns, from: source.index, into: target.index)
        return summary
    }

    /// Every callback: the ones still owed as pending entries due now, the delivered and
    /// given-up ones as they were (``PostgresOutbox/copy(_:into:now:on:)``).
    /// - Returns: Each SQLite entry's id in PostgreSQL.
    private static func copyCallbacks(
        _ outbox: any OutboxStore, into index: PostgresUpIndex, summary: inout Summary
    ) async throws -> [Int64: Int64] {
        let all = try await outbox.list([.pending, .claimed, .delivered, .dead], before: nil, limit: Int(Int32.max))
        summary.callbacksSeen = all.count
        let now = Int64(Date().timeIntervalSince1970)
        let (copied, ids) = try await index.pool.transaction { connection in
            try PostgresOutbox.copy(all, into: CallbackMessage.table, now: now, on: connection)
        }
        summary.callbacks = copied
        return ids
    }

    /// Objects (with their segments and versions) in rowid order, a page per transaction; an
    /// object whose name is taken in PostgreSQL is skipped.
    private static func copyObjects(_ source: SQLiteUpIndex, into index: PostgresUpIndex) async throws -> (Int, Int) {
        var (after, copied, seen): (Int64, Int, Int) = (0, 0, 0)
        while true {
            let cursor = after
            let page = try await source.perform { sqlite in
                try sqlite.query(
                    "SELECT rowid, bucket, object_key FROM objects WHERE rowid > ? ORDER BY rowid LIMIT 500",
                    [.integer(cursor)]
                ).compactMap { row in
                    try SQLiteUpIndex.object(bucket: row.text(1), key: row.text(2), in: sqlite).map { (try row.integer(0), $0) }
                }
            }
            guard let last = page.last else { return (copied, seen) }
            after = last.0
            seen += page.count
            copied += try await index.pool.transaction { connection in
                try page.reduce(0) { copied, row in
                    let object = row.1
                    let taken = try connection.query(
                        "SELECT 1 FROM objects WHERE bucket = $1 AND object_key = $2", [.text(object.bucket), .text(object.key)]
                    ).first != nil
                    if taken { return copied }
                    try PostgresUpIndex.insert(object, on: connection)
                    return copied + 1
                }
            }
        }
    }

    /// The rows of `table` (its `columns`, which PostgreSQL's table of the same name has, same
    /// order and meaning: `PostgresUpIndex.schemaV1`) in rowid order, a page per transaction,
    /// each through `adjust`; a row whose key is already there is skipped.
    private static func copyRows(
        _ table: String, _ columns: String, from source: SQLiteUpIndex, into index: PostgresUpIndex,
        adjust: @escaping @Sendable ([SQLiteValue]) -> [SQLiteValue] = { $0 }
    ) async throws -> (Int, Int) {
        var (after, copied, seen): (Int64, Int, Int) = (0, 0, 0)
        let count = columns.split(separator: ",").count
        let insert = "INSERT INTO \(table) (\(columns)) VALUES ("
            + (1...count).map { "$\($0)" }.joined(separator: ", ") + ") ON CONFLICT DO NOTHING"
        while true {
            let cursor = after
            let page = try await source.perform { sqlite in
                try sqlite.query(
                    "SELECT rowid, \(columns) FROM \(table) WHERE rowid > ? ORDER BY rowid LIMIT 500", [.integer(cursor)]
                ).map { (try $0.integer(0), adjust(Array($0.values.dropFirst()))) }
            }
            guard let last = page.last else { return (copied, seen) }
            after = last.0
            seen += page.count
            copied += try await index.pool.transaction { connection in
                try page.reduce(0) { copied, row in
                    copied + (try connection.query(insert, row.1.map(Self.postgres)).rowsAffected)
                }
            }
        }
    }

    private static func postgres(_ value: SQLiteValue) -> PostgresValue {
        switch value {
        case .null: .null
        case .integer(let value): .integer(value)
        case .real(let value): .double(value)
        case .text(let value): .text(value)
        case .blob(let value): .bytes(value)
        }
    }
}
