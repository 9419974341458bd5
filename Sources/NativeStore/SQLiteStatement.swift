internal import CSQLite3

/// A prepared statement: owns one `sqlite3_stmt *` and finalizes it in `deinit`.
///
/// Parameters are bound by 1-based index (SQLite's numbering), columns are read by 0-based index
/// (the select list's). Everything read is copied into Swift values at once, so nothing returned
/// points into SQLite's buffers, which the next `step()` invalidates.
///
/// Like its database, a statement belongs to one thread at a time (see `SQLiteDatabase`).
@safe public final class SQLiteStatement {
    private let handle: OpaquePointer
    /// The connection, kept for error messages. `sqlite3_close_v2` keeps it alive until the last
    /// statement is finalized, so the statement never outlives its connection.
    private let connection: OpaquePointer

    /// The SQL text this statement was prepared from.
    public let sql: String

    init(connection: OpaquePointer, sql: String, persistent: Bool) throws {
        var statement: OpaquePointer?
        // SQLITE_PREPARE_PERSISTENT tells SQLite the statement will be reused many times (the cache).
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = unsafe sqlite3_prepare_v3(connection, sql, -1, flags, &statement, nil)
        try unsafe SQLiteDatabase.check(code, connection: connection)
        guard let statement = unsafe statement else {
            // An empty string or a lone comment prepares to NULL; treat it as misuse, not a no-op.
            throw SQLiteError(code: SQLiteError.misuse, message: "no SQL statement in \"\(sql)\"")
        }
        unsafe self.handle = statement
        unsafe self.connection = connection
        self.sql = sql
    }

    deinit {
        unsafe sqlite3_finalize(handle)
    }

    /// Number of `?` parameters in the statement.
    public var parameterCount: Int { Int(unsafe sqlite3_bind_parameter_count(handle)) }

    /// Number of columns in each result row (0 for statements that return no rows).
    public var columnCount: Int { Int(unsafe sqlite3_column_count(handle)) }

    /// The name of result column `index` (0-based).
    public func columnName(_ index: Int) -> String {
        guard let name = unsafe sqlite3_column_name(handle, Int32(index)) else { return "" }
        return unsafe String(cString: name)
    }

    /// Binds `value` to parameter `index` (1-based).
    ///
    /// Text and blobs are copied by SQLite (`SQLITE_TRANSIENT`), so the Swift value may go away.
    /// - Throws: `SQLiteError` (e.g. `SQLiteError.range` for a bad index).
    public func bind(_ value: SQLiteValue, at index: Int) throws {
        let position = Int32(index)
        let code: Int32
        switch value {
        case .null:
            code = unsafe sqlite3_bind_null(handle, position)
        case .integer(let integer):
            code = unsafe sqlite3_bind_int64(handle, position, integer)
        case .real(let real):
            code = unsafe sqlite3_bind_double(handle, position, real)
        case .text(let text):
            // withCString never yields NULL (which would bind SQL NULL for ""); the explicit byte
            // count keeps interior NULs.
            let length = Int32(text.utf8.count)
            code = unsafe text.withCString {
                unsafe sqlite3_bind_text(handle, position, $0, length, csqlite3_transient())
            }
        case .blob(let bytes) where bytes.isEmpty:
            // A NULL pointer would bind SQL NULL; an empty blob must stay a zero-length blob.
            code = unsafe sqlite3_bind_zeroblob(handle, position, 0)
        case .blob(let bytes):
            code = unsafe bytes.withUnsafeBytes {
                unsafe sqlite3_bind_blob(handle, position, $0.baseAddress, Int32($0.count), csqlite3_transient())
            }
        }
        try unsafe SQLiteDatabase.check(code, connection: connection)
    }

    /// Binds `values` to parameters 1, 2, … in order.
    ///
    /// - Throws: `SQLiteError` with code `SQLiteError.range` if the count differs from `parameterCount`.
    public func bind(_ values: [SQLiteValue]) throws {
        guard values.count == parameterCount else {
            throw SQLiteError(
                code: SQLiteError.range,
                message: "\(values.count) values for \(parameterCount) parameters in \"\(sql)\""
            )
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is available (read it with `column(_:)` or `currentRow()`),
    ///   `false` when the statement has finished.
    /// - Throws: `SQLiteError`, e.g. a constraint violation from an INSERT.
    @discardableResult
    public func step() throws -> Bool {
        let code = unsafe sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        try unsafe SQLiteDatabase.check(code, connection: connection)
        return false
    }

    /// The value of column `index` (0-based) in the current row, copied into Swift.
    public func column(_ index: Int) -> SQLiteValue {
        let position = Int32(index)
        switch unsafe sqlite3_column_type(handle, position) {
        case SQLITE_INTEGER:
            return .integer(unsafe sqlite3_column_int64(handle, position))
        case SQLITE_FLOAT:
            return .real(unsafe sqlite3_column_double(handle, position))
        case SQLITE_TEXT:
            // Pointer first, then the byte count: the order sqlite3.h asks for.
            guard let text = unsafe sqlite3_column_text(handle, position) else { return .text("") }
            let count = Int(unsafe sqlite3_column_bytes(handle, position))
            return .text(unsafe String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            // A zero-length blob comes back as a NULL pointer.
            guard let bytes = unsafe sqlite3_column_blob(handle, position) else { return .blob([]) }
            let count = Int(unsafe sqlite3_column_bytes(handle, position))
            return .blob(unsafe Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// All columns of the current row.
    public func currentRow() -> SQLiteRow {
        SQLiteRow(values: (0..<columnCount).map(column))
    }

    /// Steps to the end and returns every row.
    ///
    /// - Throws: `SQLiteError`.
    public func rows() throws -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        while try step() {
            rows.append(currentRow())
        }
        return rows
    }

    /// Steps until the statement is done, discarding any rows (for INSERT, UPDATE, DELETE, DDL).
    ///
    /// - Throws: `SQLiteError`.
    public func run() throws {
        while try step() {}
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    ///
    /// The result code of `sqlite3_reset` repeats the last step's error, which was already thrown
    /// there, so it is ignored here.
    public func reset() {
        _ = unsafe sqlite3_reset(handle)
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        _ = unsafe sqlite3_clear_bindings(handle)
    }
}

/// One thread at a time, like the connection it belongs to.
@available(*, unavailable)
extension SQLiteStatement: Sendable {}
