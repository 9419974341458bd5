import NativePostgres
import TestSupport
import Testing

/// The server going away and coming back, on a cluster of this suite's own (the shared one
/// serves the other suites meanwhile).
@Suite(.serialized) struct PostgresReconnectTests {
    /// The suite's cluster, started by its first test and stopped at exit.
    private static let cluster = Task { try await PostgresCluster.start() }

    /// Runs `body` with the suite's cluster and a fresh database in it; the server is running
    /// again afterwards, however `body` ended.
    private func withCluster(_ body: (PostgresCluster, PostgresConnectionString) async throws -> Void) async throws {
        let cluster = try await Self.cluster.value
        do {
            try await body(cluster, try PostgresConnectionString(try await cluster.createDatabase("reconnect")))
        } catch {
            try? await cluster.resume()
            throw error
        }
        try await cluster.resume()
    }

    @Test func afterARestartAnOpenConnectionFailsAndThePoolServesTheNextQuery() async throws {
        try await withCluster { cluster, database in
            let pool = PostgresPool(database, configuration: .init(maxConnections: 2))
            let before = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()").first?.decode(0, as: Int.self) }
            let open = try PostgresConnection(database)
            try open.query("SELECT 1")

            // A statement running when the server shuts down fails with a connection error.
            let running = Task { try await pool.withConnection { try $0.query("SELECT pg_sleep(30)") } }
            try await waitUntil(database, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
            try await cluster.restart()
            let interrupted = await #expect(throws: PostgresError.self) { try await running.value }
            #expect(interrupted?.code == .connection)

            let error = #expect(throws: PostgresError.self) { try open.query("SELECT 1") }
            #expect(error?.code == .connection)
            #expect(open.isBroken)

            // The pool's idle connection died too; it is noticed and replaced, not handed out.
            let after = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()").first?.decode(0, as: Int.self) }
            #expect(after != nil)
            #expect(after != before)
        }
    }

    @Test func whileTheServerIsDownCallsFailWithAConnectionErrorAndSucceedOnceItIsBack() async throws {
        try await withCluster { cluster, database in
            let configuration = PostgresPool.Configuration(
                maxConnections: 2, acquireTimeout: .milliseconds(300), initialBackoff: .milliseconds(50),
                maxBackoff: .milliseconds(200))
            let pool = PostgresPool(database, configuration: configuration)
            try await pool.withConnection { try $0.query("SELECT 1") }
            try await cluster.pause()

            for _ in 0..<3 {
                let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { try $0.query("SELECT 1") } }
                #expect(error?.code == .connection)
            }
            #expect(pool.lastConnectError?.code == .connection)
            #expect(pool.openConnections == 0)

            try await cluster.resume()
            // Within one backoff period at most, the pool connects again.
            let one = try await pool.withConnection(acquireTimeout: .seconds(5)) { try $0.query("SELECT 1").first?.decode(0, as: Int.self) }
            #expect(one == 1)
            #expect(pool.lastConnectError == nil)
        }
    }

    @Test func aCallerWaitingOutAShortOutageIsServedWhenTheServerReturns() async throws {
        try await withCluster { cluster, database in
            let configuration = PostgresPool.Configuration(
                acquireTimeout: .seconds(20), initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(200))
            let pool = PostgresPool(database, configuration: configuration)
            try await cluster.pause()
            let waiting = Task { try await pool.withConnection { try $0.query("SELECT 1").first?.decode(0, as: Int.self) } }
            // The waiting caller has seen the server down at least once before it comes back.
            for _ in 0..<500 where pool.lastConnectError == nil { try await Task.sleep(for: .milliseconds(10)) }
            #expect(pool.lastConnectError?.code == .connection)
            try await cluster.resume()
            #expect(try await waiting.value == 1)
        }
    }

    /// Polls `sql` (a count) on a connection of its own until it is positive; bounded (10 s).
    private func waitUntil(_ database: PostgresConnectionString, _ sql: String) async throws {
        let watcher = PostgresPool(database, configuration: .init(maxConnections: 1))
        defer { watcher.close() }
        for _ in 0..<1000 {
            if try await watcher.withConnection({ try $0.query(sql).first?.decode(0, as: Int.self) ?? 0 }) > 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("never true: \(sql)")
    }
}
