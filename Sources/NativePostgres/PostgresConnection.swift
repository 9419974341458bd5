internal import CLibPQ

/// One connection to a PostgreSQL server: owns the `PGconn *` and closes it in `deinit`.
///
/// ```swift
/// let connection = try PostgresConnection(PostgresConnectionString("postgresql://upgate@127.0.0.1/upgate"))
/// try connection.transaction {
///     try connection.query("INSERT INTO t (name, data) VALUES ($1, $2)", ["a", .bytes([1, 2])])
/// }
/// let name = try connection.query("SELECT name FROM t WHERE id = $1", [1]).first?.decode(0, as: String.self)
/// ```
///
/// Every parameterised ``query(_:_:)`` is a prepared statement: prepared on this connection the
/// first time its SQL is seen, then executed by name (one round trip, no re-planning).
///
/// Threads: one owner at a time, like `SQLiteDatabase`; deliberately not `Sendable`. Every call
/// blocks the calling thread on the network, so async code reaches a connection through
/// ``PostgresPool``, which runs the calls on a blocking-work thread.
@safe public final class PostgresConnection {
    /// Where the connection went.
    public let connectionString: PostgresConnectionString
    /// What the connection was set up with.
    public let settings: Settings
    let handle: OpaquePointer
    /// Statement name by cache key (SQL and parameter types).
    private var prepared: [String: String] = [:]
    private var nextStatement = 0
    /// Statements ``queue(_:_:)`` holds back for the next round trip, in order.
    var queued: [QueuedStatement] = []
    /// Whether the queue starts with a `BEGIN` the server has not seen yet.
    var beginQueued = false
    /// Savepoints open inside the current transaction (``transaction(isolation:_:)`` nesting).
    var savepointDepth = 0
    /// More distinct statements than fixed store SQL ever makes means SQL built at run time:
    /// dropping them all then is crude but bounded.
    static let statementCacheCapacity = 256

    /// Connects, then applies `settings`.
    ///
    /// - Throws: ``PostgresError/Code/connection`` when the server cannot be reached (or refuses
    ///   the database), ``PostgresError/Code/authentication`` when the password is wrong or missing.
    public init(_ connectionString: PostgresConnectionString, settings: Settings = Settings()) throws {
        self.connectionString = connectionString
        self.settings = settings
        // Array order matters: libpq keeps the last value of a repeated keyword, so the defaults
        // come before the expanded string (which may override them) and client_encoding after it.
        let parameters: [(String, String)] = [
            ("connect_timeout", String(max(2, settings.connectTimeout.components.seconds))),
            ("dbname", connectionString.value),
            ("fallback_application_name", settings.applicationName),
            // Text results are decoded as UTF-8.
            ("client_encoding", "UTF8"),
        ]
        guard let connection = unsafe Self.connect(parameters) else {
            throw PostgresError(.connection, message: "libpq could not allocate a connection")
        }
        guard unsafe PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresConnectionString.trimmed(unsafe String(cString: PQerrorMessage(connection)))
            unsafe PQfinish(connection)
            throw PostgresError(
                Self.isAuthenticationFailure(message) ? .authentication : .connection,
                message: "cannot connect to \(connectionString): \(message)")
        }
        unsafe handle = connection
        // libpq prints NOTICEs ("relation already exists, skipping") on stderr by default, which
        // would land in the server's JSON log; nothing in them needs acting on.
        unsafe PQsetNoticeProcessor(connection, { _, _ in }, nil)
        let timeout = Self.milliseconds(settings.statementTimeout)
        try execute("SET statement_timeout = \(timeout); SET bytea_output = 'hex'")
    }

    deinit {
        unsafe PQfinish(handle)
    }

    private static func connect(_ parameters: [(String, String)]) -> OpaquePointer? {
        unsafe withCStrings(parameters.map(\.0)) { keywords in
            unsafe withCStrings(parameters.map(\.1)) { values in unsafe PQconnectdbParams(keywords, values, 1) }
        }
    }

    /// libpq reports a failed connection without a SQLSTATE, so the message is all there is.
    /// Anything unrecognised stays a connection error, which is the safe default (retried).
    private static func isAuthenticationFailure(_ message: String) -> Bool {
        ["password authentication failed", "no password supplied", "authentication failed"]
            .contains { message.contains($0) }
    }

    /// Whether libpq considers the connection broken (the server closed it, the network failed).
    /// A broken connection never recovers; the pool drops it.
    public var isBroken: Bool { unsafe PQstatus(handle) != CONNECTION_OK }

    /// Whether a transaction block is open (`BEGIN` ran, no `COMMIT`/`ROLLBACK` yet), including
    /// one that failed and awaits its `ROLLBACK`.
    public var isInTransaction: Bool {
        if beginQueued { return true }
        let status = unsafe PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Reads whatever the server sent while the connection sat idle, without blocking, and says
    /// whether the connection is still usable. A server that restarted or dropped the
    /// connection has sent its goodbye and closed the socket: that is seen here, before a query
    /// would fail on it.
    public func checkIdle() -> Bool {
        guard !isBroken, unsafe PQtransactionStatus(handle) == PQTRANS_IDLE else { return false }
        // Twice: a terminated backend sends its FATAL message and then closes. The first read
        // takes the message (libpq treats an error that arrives while idle as a notice, leaving
        // the connection "OK"); only the second meets the end of the stream.
        for _ in 0..<2 where unsafe PQconsumeInput(handle) != 1 { return false }
        return !isBroken
    }

    /// Number of statements prepared on this connection by ``query(_:_:)``.
    public var preparedStatementCount: Int { prepared.count }

    /// Runs `sql` with `parameters` bound to `$1`, `$2`, … as a prepared statement and returns
    /// everything it produced.
    ///
    /// - Throws: ``PostgresError`` with the server's SQLSTATE mapped to its ``PostgresError/Code``.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        let types = parameters.map(\.typeOID)
        let name = try statementName(sql, types: types)
        let encoded = try encode(parameters)
        if !queued.isEmpty { return try sendQueued(then: .prepared(name: name, parameters: encoded))! }
        let result = unsafe Self.withValues(encoded) { values in
            unsafe PQexecPrepared(handle, name, Int32(parameters.count), values, encoded.lengths, encoded.formats, 0)
        }
        return try unsafe consume(result)
    }

    /// Runs one or more semicolon-separated statements without parameters (DDL, `BEGIN`,
    /// `SET`), through the simple query protocol; returns what the last one produced.
    ///
    /// - Throws: ``PostgresError`` from the first statement that fails (later ones do not run).
    @discardableResult
    public func execute(_ sql: String) throws -> PostgresResult {
        if !queued.isEmpty { _ = try sendQueued(then: nil) }
        return try unsafe consume(PQexec(handle, sql))
    }

    /// The name of the prepared statement for `sql` with `types`, preparing it on first use.
    func statementName(_ sql: String, types: [UInt32]) throws -> String {
        let key = types.map(String.init).joined(separator: ",") + ";" + sql
        if let name = prepared[key] { return name }
        if prepared.count >= Self.statementCacheCapacity {
            try execute("DEALLOCATE ALL")
            prepared.removeAll()
        }
        nextStatement += 1
        let name = "upgate_\(nextStatement)"
        _ = try unsafe consume(PQprepare(handle, name, sql, Int32(types.count), types))
        prepared[key] = name
        return name
    }

    /// All parameter bytes in one buffer (text NUL-terminated, as libpq reads text parameters as
    /// C strings), with each one's offset (nil: NULL), length and format.
    func encode(_ parameters: [PostgresValue]) throws -> EncodedParameters {
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        for (position, parameter) in parameters.enumerated() {
            guard var bytes = parameter.encoded else {
                offsets.append(nil)
                lengths.append(0)
                continue
            }
            if !parameter.isBinary {
                guard !bytes.contains(0) else {
                    throw PostgresError(.typeMismatch, message: "text parameter $\(position + 1) contains a NUL character")
                }
                bytes.append(0)
            }
            offsets.append(buffer.count)
            lengths.append(Int32(parameter.isBinary ? bytes.count : bytes.count - 1))
            buffer += bytes
        }
        // Never empty, so the base address exists and an empty bytea is a non-NULL pointer.
        buffer.append(0)
        return (buffer, offsets, lengths, parameters.map { $0.isBinary ? 1 : 0 })
    }

    /// Copies a result out, clears it, and throws if it is an error.
    func consume(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result = unsafe result else { throw connectionError() }
        defer { unsafe PQclear(result) }
        switch unsafe PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return unsafe Self.copy(result)
        default:
            throw unsafe error(from: result)
        }
    }

    static func copy(_ result: OpaquePointer) -> PostgresResult {
        let columns = unsafe (0..<PQnfields(result)).map { column in
            unsafe PostgresColumn(name: String(cString: PQfname(result, column)), type: PQftype(result, column))
        }
        let rows = unsafe (0..<PQntuples(result)).map { row in
            let cells = (0..<Int32(columns.count)).map { column -> [UInt8]? in
                guard unsafe PQgetisnull(result, row, column) == 0 else { return nil }
                let length = Int(unsafe PQgetlength(result, row, column))
                return unsafe PQgetvalue(result, row, column).withMemoryRebound(to: UInt8.self, capacity: length) {
                    unsafe Array(UnsafeBufferPointer(start: $0, count: length))
                }
            }
            return PostgresRow(columns: columns, cells: cells)
        }
        let tag = unsafe String(cString: PQcmdStatus(result))
        let affected = unsafe Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresResult(columns: columns, rows: rows, rowsAffected: affected, commandTag: tag)
    }

    func error(from result: OpaquePointer) -> PostgresError {
        let field = { (code: Int32) -> String? in
            unsafe PQresultErrorField(result, code).map { unsafe String(cString: $0) }
        }
        let message = field(clibpq_diag_message_primary())
            ?? PostgresConnectionString.trimmed(unsafe String(cString: PQresultErrorMessage(result)))
        let state = field(clibpq_diag_sqlstate())
        // Errors libpq makes itself ("server closed the connection unexpectedly") carry no
        // SQLSTATE; the connection status tells whether the connection died.
        let code: PostgresError.Code =
            isBroken ? .connection : state.map { PostgresError.code(forSQLState: $0) } ?? .other
        return PostgresError(
            code, message: message, sqlState: state, detail: field(clibpq_diag_message_detail()),
            constraint: field(clibpq_diag_constraint_name()))
    }

    func connectionError() -> PostgresError {
        let message = PostgresConnectionString.trimmed(unsafe String(cString: PQerrorMessage(handle)))
        return PostgresError(isBroken ? .connection : .other, message: message.isEmpty ? "no result from libpq" : message)
    }

    /// A duration as whole milliseconds for a PostgreSQL setting, 0 (no limit) for nil.
    static func milliseconds(_ duration: Duration?) -> Int64 {
        guard let duration else { return 0 }
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// One owner at a time; see the type's documentation.
@available(*, unavailable)
extension PostgresConnection: Sendable {}

/// Calls `body` with a NULL-terminated array of C strings for `strings`, valid for the call only
/// (libpq copies what it keeps).
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var buffer: [CChar] = []
    var offsets: [Int] = []
    for string in strings {
        offsets.append(buffer.count)
        buffer += string.utf8CString
    }
    return unsafe buffer.withUnsafeBufferPointer { characters in
        unsafe body(offsets.map { unsafe characters.baseAddress! + $0 } + [nil])
    }
}
