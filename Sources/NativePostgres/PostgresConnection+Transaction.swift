extension PostgresConnection {
    /// The isolation levels of `BEGIN ISOLATION LEVEL …` (PostgreSQL manual §13.2).
    public enum IsolationLevel: String, Sendable {
        /// Each statement sees what was committed before it began; row locks (`FOR UPDATE`,
        /// `UPDATE`) wait for, then re-check, rows another transaction changed. PostgreSQL's default
        /// and what claims with `FOR UPDATE SKIP LOCKED` are written for.
        case readCommitted = "READ COMMITTED"
        /// One snapshot for the whole transaction; a write to a row changed since fails with
        /// ``PostgresError/Code/serializationFailure``.
        case repeatableRead = "REPEATABLE READ"
        /// As if the transactions ran one after another; any would-be anomaly fails with
        /// ``PostgresError/Code/serializationFailure`` (possibly at COMMIT).
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a transaction: `COMMIT` if it returns, `ROLLBACK` if it throws. `BEGIN`
    /// travels with the body's first statement and `COMMIT` with what ``queue(_:_:)`` left
    /// waiting, so a transaction costs no round trip of its own.
    ///
    /// Called inside a transaction, it opens a savepoint instead, so an inner failure undoes only
    /// the inner work (and `isolation` is ignored).
    ///
    /// A statement that fails inside a transaction aborts all of it, even if `body` catches the
    /// error: the server then answers the `COMMIT` with `ROLLBACK`. That is reported as
    /// ``PostgresError/Code/transactionAborted`` rather than passing for success. To recover
    /// from an expected failure inside a transaction, nest a `transaction` around the statement.
    /// - Throws: whatever `body` throws (after rolling back), or ``PostgresError`` from
    ///   `BEGIN`/`COMMIT`; a ``PostgresError/Code/connection`` error from `COMMIT` means the
    ///   outcome is unknown.
    public func transaction<T>(isolation: IsolationLevel = .readCommitted, _ body: () throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        // BEGIN goes with the first statement, COMMIT with the statements queued last.
        queueBegin(isolation)
        let result: T
        let commit: PostgresResult?
        do {
            result = try body()
            commit = try sendQueued(then: .plain("COMMIT"))
        } catch {
            // A broken connection has no transaction left to roll back; a failed ROLLBACK would
            // only hide the error worth throwing.
            if discardQueued() && isInTransaction && !isBroken { _ = try? execute("ROLLBACK") }
            throw error
        }
        guard let commit, commit.commandTag == "COMMIT" else {
            throw PostgresError(
                .transactionAborted,
                message: "COMMIT was answered with \(commit?.commandTag ?? "nothing"): a statement in the transaction had failed")
        }
        return result
    }

    private func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "upgate_savepoint_\(savepointDepth)"
        try execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            try execute("RELEASE SAVEPOINT \(name)")
            return result
        } catch {
            // What the body queued is inside the savepoint (SAVEPOINT sent everything before it).
            queued.removeAll()
            if isInTransaction && !isBroken { _ = try? execute("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)") }
            throw error
        }
    }

    /// Changes `statement_timeout` for this connection, or with `local` for the current
    /// transaction only (`SET LOCAL`, undone at its end): e.g. a longer limit for one report.
    ///
    /// - Parameter timeout: The new limit; nil for none.
    /// - Throws: ``PostgresError``.
    public func setStatementTimeout(_ timeout: Duration?, local: Bool = false) throws {
        try execute("SET \(local ? "LOCAL " : "")statement_timeout = \(Self.milliseconds(timeout))")
    }
}
