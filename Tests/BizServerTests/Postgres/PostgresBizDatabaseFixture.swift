import BizServer
import NativePostgres
import TestSupport

/// A migrated `PostgresBizDatabase` on a fresh database of the test process's shared private
/// cluster (TestSupport's `PostgresCluster`); with `sharing`, a second one on the same database
/// with its own pool: another instance.
func postgresBizDatabase(sharing other: PostgresBizDatabase? = nil, maxConnections: Int = 4) async throws -> PostgresBizDatabase {
    let connectionString: PostgresConnectionString
    if let other {
        connectionString = other.pool.connectionString
    } else {
        connectionString = try PostgresConnectionString(try await PostgresCluster.shared().createDatabase("biz"))
    }
    let database = PostgresBizDatabase(
        pool: PostgresPool(connectionString, configuration: .init(maxConnections: maxConnections)))
    try await database.migrate()
    return database
}
