import Foundation
import NativePostgres
import NativeStore
import Outbox
import Synchronization
import TestSupport
import Testing

/// A connection to an SQLite file on its own serial queue, the way a host gives `SQLiteOutbox`
/// its database; several over one file behave like several processes sharing it.
final class TestDatabase: SQLiteAccess {
    static let table = "test_outbox"

    let path: String
    private let queue = DispatchQueue(label: "outbox-test-db")
    private let connection: Mutex<SQLiteDatabase>

    /// Opens (and migrates) the file at `path`.
    init(path: String) throws {
        self.path = path
        let database = try SQLiteDatabase(path: path, configuration: .init(synchronous: .normal))
        try database.migrate(SQLiteOutbox.migrations(table: Self.table))
        connection = Mutex(database)
    }

    func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try self.connection.withLock { try work($0) } }) }
        }
    }
}

/// A fresh directory for database files; `remove()` deletes it.
struct ScratchDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

    func remove() { try? FileManager.default.removeItem(at: url) }

    var databasePath: String { url.appendingPathComponent("outbox.sqlite3").path }
}

/// The implementations every contract test runs against.
enum OutboxImplementation: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A fresh, empty store (and a cleanup).
    func make() async throws -> (store: any OutboxStore, cleanup: @Sendable () -> Void) {
        switch self {
        case .inMemory:
            return (InMemoryOutbox(), {})
        case .sqlite:
            let directory = try ScratchDirectory()
            let database = try TestDatabase(path: directory.databasePath)
            return (SQLiteOutbox(table: TestDatabase.table, access: database), { directory.remove() })
        case .postgres:
            let pool = try await Self.postgresPool()
            return (PostgresOutbox(table: TestDatabase.table, pool: pool), { pool.close() })
        }
    }

    /// A pool on a fresh database of the shared test cluster, with the outbox table migrated.
    static func postgresPool(maxConnections: Int = 2) async throws -> PostgresPool {
        let url = try await PostgresCluster.shared().createDatabase("outbox")
        let pool = PostgresPool(try PostgresConnectionString(url), configuration: .init(maxConnections: maxConnections))
        try await pool.migrate(PostgresOutbox.migrations(table: TestDatabase.table), table: "outbox_test_migrations")
        return pool
    }
}

