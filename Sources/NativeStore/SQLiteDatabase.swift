internal import CSQLite3

/// A connection to one SQLite database: owns the `sqlite3 *` and closes it in `deinit`.
///
/// ```swift
/// let db = try SQLiteDatabase(path: "records.sqlite")
/// try db.migrate(["CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"])
/// try db.transaction {
///     try db.run("INSERT INTO t (name) VALUES (?)", ["a"])
/// }
/// let rows = try db.query("SELECT id, name FROM t WHERE name = ?", ["a"])
/// ```
///
/// Threads: one owner at a time. The connection is opened with `SQLITE_OPEN_NOMUTEX` and is
/// deliberately not `Sendable`, so the compiler, not a mutex inside SQLite, keeps two threads off
/// it. A SQLite mutex would not be enough anyway: the statement cache and a transaction's
/// statements must not interleave with another thread's. To share a connection, put it behind one
/// serial owner (a `Mutex` or a serial queue). Moving it between threads is fine.
///
/// Every call blocks the calling thread on disk I/O and locks; async code should call in from a
/// thread of its own, not from the Swift cooperative pool.
@safe public final class SQLiteDatabase {
    /// The path the database was opened with (`":memory:"` for a private in-memory database).
    public let path: String
    /// The settings applied when the connection opened.
    public let configuration: Configuration

    private var handle: OpaquePointer?
    /// Statements checked in by `withStatement`, keyed by SQL text.
    private var cache: [String: SQLiteStatement] = [:]

    /// Opens (creating if needed) the database at `path` and applies `configuration`.
    ///
    /// - Parameters:
    ///   - path: A file path, or `":memory:"` for a private in-memory database.
    ///   - configuration: Busy timeout, durability, WAL, foreign keys.
    /// - Throws: `SQLiteError` if the file cannot be opened or a setting cannot be applied
    ///   (e.g. WAL on a file system without shared memory).
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let code = unsafe sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection = unsafe connection else {
            // Even a failed open may allocate a handle, which carries the message and must be closed.
            let error = SQLiteError(code: code, message: unsafe Self.message(code, connection: connection))
            unsafe sqlite3_close_v2(connection)
            throw error
        }
        unsafe self.handle = connection
        unsafe sqlite3_extended_result_codes(connection, 1)
        try configure()
    }

    deinit {
        cache.removeAll()
        if let handle = unsafe handle { unsafe sqlite3_close_v2(handle) }
    }

    private func configure() throws {
        let (seconds, attoseconds) = configuration.busyTimeout.components
        let milliseconds = max(0, min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        let connection = try unsafe requireHandle()
        try unsafe Self.check(sqlite3_busy_timeout(connection, Int32(milliseconds)), connection: connection)
        if configuration.writeAheadLog {
            // journal_mode answers with the mode it ended up in; an in-memory database stays "memory".
            let mode = try prepare("PRAGMA journal_mode = WAL").rows().first?[0].textValue?.lowercased()
            guard mode == "wal" || mode == "memory" else {
                let message = "WAL not available for \(path): journal_mode is \(mode ?? "unknown")"
                throw SQLiteError(code: SQLiteError.error, message: message)
            }
        }
        try execute("PRAGMA synchronous = \(configuration.synchronous.rawValue)")
        try execute("PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
    }

    /// Whether `close()` has not been called yet.
    public var isOpen: Bool { unsafe handle != nil }

    /// Finalizes cached statements and closes the connection. Later calls throw `SQLiteError.misuse`.
    ///
    /// `sqlite3_close_v2` defers the real close until statements still held by callers are
    /// finalized, so closing never fails with `SQLITE_BUSY`.
    public func close() {
        cache.removeAll()
        if let handle = unsafe handle { unsafe sqlite3_close_v2(handle) }
        unsafe handle = nil
    }

    /// Runs one or more semicolon-separated statements that take no parameters (DDL, PRAGMA).
    ///
    /// - Throws: `SQLiteError` from the first statement that fails.
    public func execute(_ sql: String) throws {
        let connection = try unsafe requireHandle()
        try unsafe Self.check(sqlite3_exec(connection, sql, nil, nil, nil), connection: connection)
    }

    /// Prepares a new statement that the caller owns; it is finalized when released.
    ///
    /// - Throws: `SQLiteError` for a syntax error or an unknown table or column.
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        try unsafe SQLiteStatement(connection: requireHandle(), sql: sql, persistent: false)
    }

    /// Runs `body` with a statement for `sql` from the cache, preparing it on first use.
    ///
    /// The statement is taken out of the cache while `body` runs, so a nested call with the same
    /// SQL gets a fresh statement instead of resetting the one being read. Afterwards it is
    /// reset, its bindings cleared, and put back. Statements must not escape `body`.
    /// - Throws: `SQLiteError` from preparing, or whatever `body` throws.
    public func withStatement<T>(_ sql: String, _ body: (SQLiteStatement) throws -> T) throws -> T {
        let statement = try unsafe cache.removeValue(forKey: sql)
            ?? SQLiteStatement(connection: requireHandle(), sql: sql, persistent: true)
        defer {
            statement.reset()
            statement.clearBindings()
            if isOpen {
                // Dropping everything at the cap is crude but cheap; fixed SQL never reaches it.
                if cache.count >= configuration.statementCacheCapacity { cache.removeAll() }
                cache[sql] = statement
            }
        }
        return try body(statement)
    }

    /// Number of statements in the cache (metrics and tests).
    public var cachedStatementCount: Int { cache.count }

    /// Runs a cached statement with `bindings` to completion, discarding any rows.
    ///
    /// - Throws: `SQLiteError`, e.g. a constraint violation.
    public func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws {
        try withStatement(sql) { statement in
            try statement.bind(bindings)
            try statement.run()
        }
    }

    /// Runs a cached statement with `bindings` and returns all rows.
    ///
    /// - Throws: `SQLiteError`.
    public func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> [SQLiteRow] {
        try withStatement(sql) { statement in
            try statement.bind(bindings)
            return try statement.rows()
        }
    }

    /// The rowid of the most recent successful INSERT on this connection (0 if none).
    public var lastInsertRowID: Int64 {
        guard let handle = unsafe handle else { return 0 }
        return unsafe sqlite3_last_insert_rowid(handle)
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    ///
    /// An `INSERT ... ON CONFLICT DO NOTHING` that hit the conflict reports 0.
    public var changes: Int {
        guard let handle = unsafe handle else { return 0 }
        return Int(unsafe sqlite3_changes64(handle))
    }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    public var isInTransaction: Bool {
        guard let handle = unsafe handle else { return false }
        return unsafe sqlite3_get_autocommit(handle) == 0
    }

    /// Runs `body` in a transaction: commits if it returns, rolls back if it throws.
    ///
    /// The outermost call uses `BEGIN IMMEDIATE`, taking the write lock up front so that a
    /// read-then-write body cannot fail halfway with `SQLITE_BUSY` (and waits `busyTimeout` for
    /// it). A nested call becomes a savepoint, so an inner failure undoes only the inner work.
    /// - Throws: whatever `body` throws (after rolling back), or `SQLiteError` from BEGIN/COMMIT.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        let nested = isInTransaction
        try execute(nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute(nested ? "RELEASE nested" : "COMMIT")
            return result
        } catch {
            // Some errors (SQLITE_FULL, IOERR) already rolled the transaction back; rolling back
            // again would fail and hide the real error, which is the one worth throwing.
            if isInTransaction {
                try? execute(nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK")
            }
            throw error
        }
    }

    private func requireHandle() throws -> OpaquePointer {
        guard let handle = unsafe handle else {
            throw SQLiteError(code: SQLiteError.misuse, message: "database \(path) is closed")
        }
        return unsafe handle
    }

    /// The one place a result code becomes a Swift error: anything but OK, ROW and DONE throws.
    static func check(_ code: Int32, connection: OpaquePointer?) throws {
        if code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE { return }
        // The OS errno tells a full disk behind an IOERR (a failed fsync or shm growth) from a
        // broken one; SQLite keeps it per connection for the last failed call.
        let systemErrno = unsafe connection.map { unsafe sqlite3_system_errno($0) } ?? 0
        throw SQLiteError(code: code, message: unsafe message(code, connection: connection), systemErrno: systemErrno)
    }

    /// The connection's message if it describes `code`, else SQLite's generic text for the code.
    private static func message(_ code: Int32, connection: OpaquePointer?) -> String {
        if let connection = unsafe connection, unsafe sqlite3_extended_errcode(connection) == code,
            let text = unsafe sqlite3_errmsg(connection)
        {
            return unsafe String(cString: text)
        }
        guard let text = unsafe sqlite3_errstr(code) else { return "SQLite error \(code)" }
        return unsafe String(cString: text)
    }
}

/// One owner at a time; see the type's documentation.
@available(*, unavailable)
extension SQLiteDatabase: Sendable {}
