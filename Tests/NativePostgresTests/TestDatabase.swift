import NativePostgres
import TestSupport

/// A fresh database in the process's shared cluster, for one test.
func testDatabase(_ name: String = "test") async throws -> PostgresConnectionString {
    try PostgresConnectionString(try await PostgresCluster.shared().createDatabase(name))
}
