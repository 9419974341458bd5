import NativePostgres
import TestSupport

/// A fresh database in the process's shared cluster, for one test.
func testDatabase(_ name: String = "test") async throws -> PostgresConnectionString {
    try PostgresConnectionString(try await PostgresCluster.shared().createDatabase(name))
}

/// The `id`s in table `t`, in order: what the transaction tests committed.
func ids(_ pool: PostgresPool) async throws -> [Int] {
    try await pool.withConnection { try $0.query("SELECT id FROM t ORDER BY id").rows.map { try $0.decode(0, as: Int.self) } }
}
