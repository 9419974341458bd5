import NativeCrypto
public import NativePostgres
public import Outbox

/// The index on PostgreSQL (issue 12 §2): every role (`BlockIndex`, `MultipartIndex`,
/// `ObjectIndex`, `ObjectCatalog`, `SweepIndex`, one extension each) and the callback outbox (``outbox``) in one
/// database, so several up-server instances share it and any request may land on any of them.
///
/// What `SQLiteUpIndex` gets from SQLite's one writer, this gets from the database (DESIGN.md
/// "Shared state never lives in a process"): an object, its completion record and its callback's
/// outbox entry are one transaction; writers of the same completion key and of the same
/// (bucket, key) take a transaction-scoped advisory lock first (``lockName(_:on:)``), so a
/// repeated mkfile from another instance waits for the first and reads its answer, and of two
/// insertOnly puts exactly one wins; a block's offset moves by compare-and-set; upload rows are
/// locked `FOR UPDATE` by whoever changes them. Transactions are READ COMMITTED, so a statement
/// after a lock sees what the lock's previous holder committed.
///
/// The schema is applied by ``migrate()`` (versioned, under PostgreSQL's advisory lock, so two
/// instances starting together take turns). Calls block on the network and run on the pool's
/// blocking-work threads, never on the Swift cooperative pool.
public final class PostgresUpIndex: Sendable {
    /// The connections.
    public let pool: PostgresPool

    /// The index in the database behind `pool`; call ``migrate()`` before serving.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Brings the schema up to date (``migrations``, recorded in `up_schema_migrations`).
    ///
    /// - Returns: How many migrations ran.
    /// - Throws: ``PostgresError``.
    @discardableResult
    public func migrate() async throws -> Int {
        try await pool.migrate(Self.migrations, table: "up_schema_migrations")
    }

    /// The callback outbox, in this database's `callback_outbox` table.
    public var outbox: PostgresOutbox { PostgresOutbox(table: CallbackMessage.table, pool: pool) }

    /// Runs `body` in one READ COMMITTED transaction on a pooled connection.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await pool.transaction(body)
    }

    /// Runs `body` (one statement, needing no transaction) on a pooled connection.
    func connection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await pool.withConnection(body)
    }

    /// Takes a transaction-scoped advisory lock on `name` (released at COMMIT or ROLLBACK): the
    /// way two instances writing the same completion or the same key take turns. A hash
    /// collision between two names only makes them wait for each other.
    ///
    /// Order, where one transaction takes several: the completion, then the upload row, then the
    /// object name — never the other way, so two transactions cannot wait on each other; two
    /// object names (a copy or move) in the order of their lock names; the lifecycle sweep only
    /// tries its names' locks and skips a busy one.
    ///
    /// Queued (``PostgresConnection/queue(_:_:)``): the lock is taken, in order, before the next
    /// statement that needs an answer, in that statement's round trip.
    static func lockName(_ name: String, on connection: PostgresConnection) throws {
        try connection.queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [.text(name)])
    }

    /// The lock name of an object (``lockName(_:on:)``); the bucket's length keeps
    /// ("a", "b/c") and ("a/b", "c") apart.
    static func objectLock(bucket: String, key: String) -> String {
        "up.object:\(bucket.utf8.count):\(bucket)/\(key)"
    }

    /// The lock name of a completion key.
    static func completionLock(_ key: CompletionKey) -> String {
        "up.completion:\(key.bucket.utf8.count):\(key.bucket)/\(Hex.encode(key.requestSHA1))"
    }

    /// The subset of `blobs` that no object, block or part row names: safe to delete once the
    /// current transaction commits.
    static func unreferenced(_ blobs: [BlobID], on connection: PostgresConnection) throws -> [BlobID] {
        try Array(Set(blobs)).sorted().filter { blob in
            try connection.query(
                """
                SELECT NOT EXISTS (SELECT 1 FROM segments WHERE blob = $1)
                   AND NOT EXISTS (SELECT 1 FROM blocks WHERE blob = $1)
                   AND NOT EXISTS (SELECT 1 FROM parts WHERE blob = $1)
                """, [.text(blob.hex)]
            ).first?.decode(0, as: Bool.self) ?? false
        }
    }
}
