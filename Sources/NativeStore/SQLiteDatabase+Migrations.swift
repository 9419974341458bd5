extension SQLiteDatabase {
    /// The schema version stored in the database header (`PRAGMA user_version`); 0 for a new file.
    ///
    /// - Throws: `SQLiteError`.
    public func userVersion() throws -> Int {
        Int(try query("PRAGMA user_version").first?.integer(0) ?? 0)
    }

    /// Brings the schema up to date: applies `migrations[userVersion...]` in order, then sets
    /// `user_version` to `migrations.count`, all in one transaction.
    ///
    /// Migration *n* (0-based) takes the schema from version *n* to *n + 1*. The list only grows:
    /// never edit or reorder a migration that has shipped. The transaction is `BEGIN IMMEDIATE`,
    /// so two processes starting together cannot both apply the same migration; a failure leaves
    /// the schema at its old version. Migrations cannot change `PRAGMA foreign_keys` or
    /// `journal_mode`, which SQLite ignores inside a transaction.
    /// - Parameter migrations: SQL scripts; each may hold several statements.
    /// - Returns: How many migrations ran (0 when the schema was current).
    /// - Throws: `SQLiteError` from a failing migration, or code `SQLiteError.error` if the
    ///   database is newer than `migrations` (an older binary must not write to a newer schema).
    @discardableResult
    public func migrate(_ migrations: [String]) throws -> Int {
        try transaction {
            let current = try userVersion()
            guard current <= migrations.count else {
                throw SQLiteError(
                    code: SQLiteError.error,
                    message: "\(path) has schema version \(current); this program knows \(migrations.count)"
                )
            }
            for migration in migrations[current...] {
                try execute(migration)
            }
            if current < migrations.count {
                // PRAGMA takes no bound parameters; the value is an Int, so interpolation is safe.
                try execute("PRAGMA user_version = \(migrations.count)")
            }
            return migrations.count - current
        }
    }
}
