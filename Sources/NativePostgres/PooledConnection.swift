import Synchronization

/// A ``PostgresConnection`` owned by a ``PostgresPool``: `Sendable` because the connection sits
/// in a `Mutex`, and the pool leases it to one caller at a time, so the lock is never contended.
final class PooledConnection: Sendable {
    private let connection: Mutex<PostgresConnection>

    init(_ connection: sending PostgresConnection) {
        self.connection = Mutex(connection)
    }

    /// What one use produced: the body's result (nil when the connection was found dead before
    /// the body ran), and whether the connection can go back into the pool.
    struct Outcome<T: Sendable>: Sendable {
        var result: Result<T, any Error>?
        var reusable: Bool
    }

    /// Runs `body` with the connection, first checking (`checkFirst`) that it did not die while
    /// idle. Afterwards a transaction the body left open is rolled back.
    func run<T: Sendable>(checkFirst: Bool, _ body: @Sendable (PostgresConnection) throws -> T) -> Outcome<T> {
        connection.withLock { connection in
            if checkFirst && !connection.checkIdle() { return Outcome(result: nil, reusable: false) }
            let result = Result { try body(connection) }
            if connection.isInTransaction && !connection.isBroken { _ = try? connection.execute("ROLLBACK") }
            return Outcome(result: result, reusable: !connection.isBroken && !connection.isInTransaction)
        }
    }
}
