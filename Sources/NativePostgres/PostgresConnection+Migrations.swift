extension PostgresConnection {
    /// Brings the schema up to date: applies each of `migrations` not yet recorded in `table`,
    /// in order, each in its own transaction together with its row in `table`.
    ///
    /// Migration *n* (0-based) is version *n + 1*. The list only grows: never edit or reorder a
    /// migration that has shipped. Everything runs under a session-level `pg_advisory_lock`
    /// keyed by `table`, so instances starting together take turns: the first applies, the
    /// others wait, then find nothing left to do. (Even `CREATE TABLE IF NOT EXISTS` is not safe
    /// to race: two at once can fail on the catalog's unique index.) The statement timeout is
    /// lifted meanwhile, since waiting for the lock or a long migration is not a stuck query. A
    /// failing migration leaves the schema at the version before it. `CREATE INDEX
    /// CONCURRENTLY` cannot run inside a transaction and so cannot be a migration here.
    /// - Parameters:
    ///   - migrations: SQL scripts; each may hold several statements.
    ///   - table: Where applied versions are recorded (one per program sharing a database, e.g.
    ///     `biz_schema_migrations`); a lower-case SQL identifier.
    /// - Returns: How many migrations ran (0 when the schema was current).
    /// - Throws: ``PostgresError`` from a failing migration, or ``PostgresError/Code/configuration``
    ///   if the database has versions this program does not know (an older binary must not
    ///   write to a newer schema) or `table` is not a plain identifier.
    @discardableResult
    public func migrate(_ migrations: [String], table: String = "schema_migrations") throws -> Int {
        guard let first = table.first, first == "_" || first.isLowercase,
            table.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLowercase || $0.isNumber)) })
        else {
            throw PostgresError(.configuration, message: "migration table name \(table) is not a lower-case SQL identifier")
        }
        let key = Self.advisoryLockKey("upgate.migrations:\(table)")
        try setStatementTimeout(nil)
        defer { _ = try? setStatementTimeout(settings.statementTimeout) }
        try execute("SELECT pg_advisory_lock(\(key))")
        defer { _ = try? execute("SELECT pg_advisory_unlock(\(key))") }
        try execute(
            "CREATE TABLE IF NOT EXISTS \(table) (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        let applied = Set(try query("SELECT version FROM \(table)").rows.map { try $0.decode(0, as: Int.self) })
        if let newest = applied.max(), newest > migrations.count {
            throw PostgresError(
                .configuration,
                message: "the database has schema version \(newest) in \(table); this program knows \(migrations.count)")
        }
        var count = 0
        for (index, migration) in migrations.enumerated() where !applied.contains(index + 1) {
            try transaction {
                try execute(migration)
                try query("INSERT INTO \(table) (version) VALUES ($1)", [.integer(Int64(index + 1))])
            }
            count += 1
        }
        return count
    }

    /// A lock key every process computes alike: 64-bit FNV-1a of `name` (Swift's `Hasher` is
    /// seeded per process, so it cannot be used).
    static func advisoryLockKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}

extension PostgresPool {
    /// Applies `migrations` on one of the pool's connections (``PostgresConnection/migrate(_:table:)``):
    /// call once at start, before serving.
    ///
    /// - Returns: How many migrations ran.
    /// - Throws: as ``PostgresConnection/migrate(_:table:)``, or the pool's connection errors.
    @discardableResult
    public func migrate(_ migrations: [String], table: String = "schema_migrations") async throws -> Int {
        try await withConnection { try $0.migrate(migrations, table: table) }
    }
}
