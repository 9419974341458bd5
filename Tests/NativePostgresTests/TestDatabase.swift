import NativePostgres
import TestSupport

/// A fresh database in the process's shared cluster, for one test.
func testDatabase(_ name: String = "test") async throws -> PostgresConnectionString {
    try await PostgresCluster.shared().createDatabase(name)
}

/// A pool on a fresh database.
func testPool(_ name: String = "test", configuration: PostgresPool.Configuration = .init()) async throws -> PostgresPool {
    PostgresPool(try await testDatabase(name), configuration: configuration)
}
