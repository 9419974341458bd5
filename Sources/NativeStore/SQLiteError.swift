internal import Glibc

/// A failed SQLite call: the extended result code and SQLite's message.
///
/// Extended codes are enabled on every connection (`sqlite3_extended_result_codes`), so `code` tells
/// a unique-index clash (2067) from a NOT NULL failure (1299) without parsing the message.
/// Equality and hashing use `code` only: the message is diagnostic text that varies between
/// SQLite versions and must not decide control flow, so `#expect(throws: SQLiteError(code: 2067))`
/// works.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code, e.g. 2067 (`SQLITE_CONSTRAINT_UNIQUE`) or 5 (`SQLITE_BUSY`).
    public var code: Int32
    /// SQLite's explanation (`sqlite3_errmsg`), or a message from this wrapper.
    public var message: String
    /// The `errno` of the OS call behind an I/O failure (`sqlite3_system_errno`), 0 if none.
    public var systemErrno: Int32

    /// Creates an error with an extended result code, a message and the OS error behind it.
    public init(code: Int32, message: String = "", systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.systemErrno = systemErrno
    }

    /// The primary result code: the low 8 bits of `code` (19 for every constraint violation).
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether a constraint (UNIQUE, PRIMARY KEY, NOT NULL, CHECK, FOREIGN KEY) rejected the change.
    public var isConstraintViolation: Bool { primaryCode == SQLiteError.constraint }

    /// Whether a UNIQUE or PRIMARY KEY constraint rejected the change: the row already exists.
    public var isUniqueViolation: Bool {
        code == SQLiteError.constraintUnique || code == SQLiteError.constraintPrimaryKey
    }

    /// Whether another connection held a lock for longer than the busy timeout.
    public var isBusy: Bool { primaryCode == SQLiteError.busy || primaryCode == SQLiteError.locked }

    /// Whether the disk (or quota, or `max_page_count`) had no room for the change:
    /// `SQLITE_FULL`, or an I/O error whose OS cause was `ENOSPC`/`EDQUOT` (SQLite reports a
    /// failed fsync or shared-memory growth as `SQLITE_IOERR_*`). The statement or transaction
    /// was rolled back; the database is intact and the same change can succeed once space is freed.
    public var isFull: Bool {
        primaryCode == SQLiteError.full
            || (primaryCode == SQLiteError.ioError && (systemErrno == ENOSPC || systemErrno == EDQUOT))
    }

    /// A readable summary for logs.
    public var description: String {
        systemErrno == 0 ? "SQLiteError(\(code)): \(message)" : "SQLiteError(\(code)): \(message) (errno \(systemErrno))"
    }

    /// Errors are equal when their codes are; messages are ignored.
    public static func == (lhs: SQLiteError, rhs: SQLiteError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension SQLiteError {
    // Codes are repeated here (from sqlite3.h, stable since 3.7) so callers never need the C module.

    /// `SQLITE_ERROR`: generic error, also used by this wrapper for misuse it detects itself.
    public static let error: Int32 = 1
    /// `SQLITE_BUSY`.
    public static let busy: Int32 = 5
    /// `SQLITE_LOCKED`.
    public static let locked: Int32 = 6
    /// `SQLITE_IOERR`, the primary code of every OS-level I/O failure.
    public static let ioError: Int32 = 10
    /// `SQLITE_FULL`: the disk is full (or the database reached `max_page_count`).
    public static let full: Int32 = 13
    /// `SQLITE_CONSTRAINT`, the primary code of every constraint violation.
    public static let constraint: Int32 = 19
    /// `SQLITE_MISMATCH`: also thrown when a column holds another type than the one asked for.
    public static let mismatch: Int32 = 20
    /// `SQLITE_MISUSE`: the API was used out of order (e.g. on a closed database).
    public static let misuse: Int32 = 21
    /// `SQLITE_RANGE`: a bind or column index out of range.
    public static let range: Int32 = 25
    /// `SQLITE_CONSTRAINT_FOREIGNKEY`.
    public static let constraintForeignKey: Int32 = 787
    /// `SQLITE_CONSTRAINT_NOTNULL`.
    public static let constraintNotNull: Int32 = 1299
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`.
    public static let constraintPrimaryKey: Int32 = 1555
    /// `SQLITE_CONSTRAINT_UNIQUE`.
    public static let constraintUnique: Int32 = 2067
}
