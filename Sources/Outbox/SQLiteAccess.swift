public import NativeStore

/// The connection an SQLite store runs its statements on, and the thread it runs them on.
///
/// ``SQLiteOutbox`` does not open a database of its own: it shares its host's (up-server's index,
/// biz-server's record store), so the host can write an outbox entry in the same transaction as
/// what the entry is about, and both go through the host's one serial executor.
public protocol SQLiteAccess: Sendable {
    /// Runs `work` with the connection, serialized with every other use of it, off the caller's
    /// thread; suspends the caller until it ends.
    func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T
}
