import Foundation
import NativePostgres
import Synchronization
import TestSupport
import Testing

@Suite struct PostgresPoolTests {
    @Test func manyConcurrentCallersShareABoundedSetOfConnections() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 3))
        try await pool.withConnection { try $0.execute("CREATE TABLE t (caller int PRIMARY KEY, backend int, seen int)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<40 {
                group.addTask {
                    _ = try await pool.withConnection { connection in
                        // What the server counts, not what the pool says: sessions on this database.
                        try connection.query(
                            """
                            INSERT INTO t SELECT $1, pg_backend_pid(), count(*) FROM pg_stat_activity
                            WHERE datname = current_database() AND pg_sleep(0.01) IS NOT NULL
                            """, [.integer(Int64(caller))])
                    }
                }
            }
            try await group.waitForAll()
        }
        let (rows, backends, most) = try await pool.withConnection { connection in
            let row = try #require(
                connection.query("SELECT count(*), count(DISTINCT backend), max(seen) FROM t").first)
            return (try row.decode(0, as: Int.self), try row.decode(1, as: Int.self), try row.decode(2, as: Int.self))
        }
        #expect(rows == 40)
        #expect(backends <= 3)
        #expect(most <= 3)
        #expect(pool.openConnections <= 3)
    }

    @Test func aCallerWhoFindsEveryConnectionBusyGivesUpAfterTheAcquireTimeout() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        let holder = Task { try await pool.withConnection { try $0.query("SELECT pg_sleep(2)") } }
        for _ in 0..<500 where pool.openConnections == 0 { try await Task.sleep(for: .milliseconds(10)) }
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection(acquireTimeout: .milliseconds(200)) { try $0.query("SELECT 1") }
        }
        #expect(error.code == .poolTimeout)
        _ = try await holder.value
        #expect(try await pool.withConnection { try $0.query("SELECT 1").rows.count } == 1)
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        let holder = Task { try await pool.withConnection { try $0.query("SELECT pg_sleep(1)") } }
        for _ in 0..<500 where pool.openConnections == 0 { try await Task.sleep(for: .milliseconds(10)) }
        let waiter = Task { try await pool.withConnection(acquireTimeout: .seconds(30)) { try $0.query("SELECT 1") } }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        _ = try await holder.value
        // The connection went back to the pool, not to the cancelled waiter.
        #expect(try await pool.withConnection(acquireTimeout: .seconds(2)) { try $0.query("SELECT 1").rows.count } == 1)
        #expect(pool.openConnections == 1)
    }

    @Test func aConnectionTheServerDroppedWhileIdleIsReplacedBeforeUse() async throws {
        let database = try await testDatabase()
        let pool = PostgresPool(database, configuration: .init(maxConnections: 1))
        let first = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()").first?.decode(0, as: Int.self) }
        // Waits (up to 5 s) until that backend has exited, so its goodbye is on the socket.
        let terminated = try PostgresConnection(database).query(
            "SELECT pg_terminate_backend($1, 5000)", [.integer(Int64(try #require(first)))])
        #expect(try terminated.first?.decode(0, as: Bool.self) == true)
        let second = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()").first?.decode(0, as: Int.self) }
        #expect(second != nil)
        #expect(second != first)
        #expect(pool.openConnections == 1)
    }

    @Test func aConnectionThatBreaksInUseFailsThatCallAndIsReplaced() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { try $0.query("SELECT pg_terminate_backend(pg_backend_pid())") }
        }
        #expect(error.code == .connection)
        #expect(pool.openConnections == 0)
        #expect(try await pool.withConnection { try $0.query("SELECT 1").rows.count } == 1)
    }

    @Test func aWrongPasswordFailsAtOnceAsAnAuthenticationError() async throws {
        let cluster = try await PostgresCluster.shared()
        let passfile = "/tmp/upgate-pg-passfile-\(cluster.port)"
        try "*:*:*:upgate:Tr0ub4dor-not-it\n".write(toFile: passfile, atomically: true, encoding: .utf8)
        // libpq ignores a password file others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passfile)
        defer { try? FileManager.default.removeItem(atPath: passfile) }
        let pool = PostgresPool(
            try PostgresConnectionString("postgresql://upgate@127.0.0.1:\(cluster.port)/postgres?passfile=\(passfile)&sslmode=disable"))
        let started = ContinuousClock.now
        let error = try await #require(throws: PostgresError.self) { try await pool.withConnection { try $0.query("SELECT 1") } }
        #expect(error.code == .authentication)
        #expect(ContinuousClock.now - started < .seconds(4))
        #expect(!error.message.contains("Tr0ub4dor"), "\(error.message)")
    }
}
