import BizServer
import HTTPKit
import NativePostgres
import TestSupport
import Testing

/// Issue 12 §1: while PostgreSQL is unreachable `/healthz` is 503 and every request that needs
/// the database gets 503 with `Retry-After`; a callback answered 503 recorded nothing, so the up
/// server's redelivery after the restart records it once. The pool reconnects by itself.
@Suite("biz-server while PostgreSQL is down")
struct BizPostgresOutageTests {
    @Test func healthTokensAndCallbacksAre503WhileTheDatabaseIsDownAndRecover() async throws {
        let cluster = try await PostgresCluster.start()
        defer { Task { await cluster.stop() } }
        let pool = PostgresPool(
            try PostgresConnectionString(try await cluster.createDatabase("bizoutage")),
            configuration: .init(maxConnections: 2, acquireTimeout: .seconds(1), maxBackoff: .milliseconds(200)))
        let database = PostgresBizDatabase(pool: pool)
        try await database.migrate()
        let harness = BizServerHarness(postgres: database)
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/a"}"#)
        let callback = harness.callback(for: policy, key: "demo/a")
        #expect(await harness.send(.get, "/healthz").status == 200)

        try await cluster.pause()
        #expect(await harness.send(.get, "/healthz").status == 503)
        let refusedToken = await harness.token("{}")
        #expect(refusedToken.status == 503)
        #expect(refusedToken.headers["Retry-After"] == "1")
        let refused = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(refused.errorText == "upload store unavailable, retry later")
        #expect(await harness.send(.get, "/v1/uploads", headers: ["Authorization": "Bearer \(BizServerHarness.demoKey)"]).status == 503)

        try await cluster.resume()
        var healthy = false
        for _ in 0..<50 where !healthy {  // bounded: the pool's backoff is at most 200 ms
            healthy = await harness.send(.get, "/healthz").status == 200
            if !healthy { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(healthy)
        let redelivered = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(redelivered.status == 200)
        #expect(try await database.records.count() == 1)
        #expect(await harness.token("{}").status == 200)
        pool.close()
    }
}
