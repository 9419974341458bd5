/// A failed PostgreSQL call: what kind of failure it was (``Code``), the server's SQLSTATE when
/// there is one, and the server's (or this wrapper's) message.
///
/// Callers decide by ``code``, never by message text: a store maps ``Code/uniqueViolation`` to
/// "already exists", ``Code/connection`` to 503 with `Retry-After`, ``isRetryable`` to "run the
/// transaction again". Equality and hashing use ``code`` only, so
/// `#expect(throws: PostgresError(.uniqueViolation))` works whatever the message says.
///
/// Messages never contain a password: libpq does not echo it, and this wrapper refuses
/// connection strings that carry one (``PostgresConnectionString``).
public struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of failure callers map to different answers.
    public enum Code: String, Sendable, Hashable {
        /// The server cannot be reached, or the connection broke (SQLSTATE class 08, 57P01–57P03
        /// when the server shuts down, or libpq reporting `CONNECTION_BAD`). The connection is
        /// unusable; the pool replaces it. Whether an in-flight COMMIT took effect is unknown.
        case connection
        /// Password or role rejected (SQLSTATE class 28).
        case authentication
        /// A UNIQUE or PRIMARY KEY constraint rejected the row (23505): it already exists.
        case uniqueViolation
        /// Another integrity constraint rejected the row: NOT NULL, CHECK, FOREIGN KEY (class 23).
        case constraintViolation
        /// A SERIALIZABLE or REPEATABLE READ transaction lost a race (40001): run it again.
        case serializationFailure
        /// Two transactions waited on each other and the server aborted this one (40P01): run it again.
        case deadlock
        /// The statement ran longer than `statement_timeout` (57014, "canceling statement due to
        /// statement timeout"; a cancel request has the same SQLSTATE). The connection stays usable.
        case statementTimeout
        /// `lock_timeout` expired, or `NOWAIT` met a held lock (55P03).
        case lockNotAvailable
        /// No pooled connection became free within the pool's acquire timeout.
        case poolTimeout
        /// The pool was closed.
        case poolClosed
        /// A connection string or setting is wrong (this wrapper's check, or libpq's parser).
        case configuration
        /// A result column could not be read as the Swift type asked for, or does not exist.
        case typeMismatch
        /// A COMMIT that the server turned into a ROLLBACK because the transaction had already
        /// failed (an error inside it was caught and ignored).
        case transactionAborted
        /// Any other server error; ``sqlState`` says which.
        case other
    }

    /// What kind of failure this is.
    public var code: Code
    /// The five-character SQLSTATE from the server (e.g. `"23505"`), nil for client-side failures.
    public var sqlState: String?
    /// The primary message (server's or libpq's), without a trailing newline.
    public var message: String
    /// The server's DETAIL line, if any (e.g. `Key (name)=(a) already exists.`).
    public var detail: String?
    /// The constraint that failed, for integrity violations (`PG_DIAG_CONSTRAINT_NAME`).
    public var constraint: String?

    /// Creates an error of kind `code`.
    public init(
        _ code: Code, message: String = "", sqlState: String? = nil, detail: String? = nil, constraint: String? = nil
    ) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.constraint = constraint
    }

    /// Whether running the same transaction again may succeed: a serialization failure or a deadlock.
    ///
    /// A ``Code/connection`` error is not in this list: a COMMIT whose reply was lost may have
    /// taken effect, so only the caller knows whether repeating it is safe.
    public var isRetryable: Bool { code == .serializationFailure || code == .deadlock }

    /// Whether the connection is gone and the database may be unreachable (callers answer 503).
    public var isConnectionError: Bool { code == .connection }

    /// A readable summary for logs.
    public var description: String {
        var text = "PostgresError(\(code.rawValue)\(sqlState.map { " \($0)" } ?? "")): \(message)"
        if let detail { text += " (\(detail))" }
        return text
    }

    /// Errors are equal when their codes are; messages and details are ignored.
    public static func == (lhs: PostgresError, rhs: PostgresError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The kind of a server error with SQLSTATE `state` (PostgreSQL manual, Appendix A).
    public static func code(forSQLState state: String) -> Code {
        switch state {
        case "23505": return .uniqueViolation
        case "40001": return .serializationFailure
        case "40P01": return .deadlock
        case "57014": return .statementTimeout
        case "55P03": return .lockNotAvailable
        // admin_shutdown, crash_shutdown, cannot_connect_now: the server is going away or not up yet.
        case "57P01", "57P02", "57P03": return .connection
        default: break
        }
        switch state.prefix(2) {
        case "08": return .connection
        case "28": return .authentication
        case "23": return .constraintViolation
        default: return .other
        }
    }
}
