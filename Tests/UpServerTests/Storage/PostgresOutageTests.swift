import Basics
import HTTPKit
import NativeCrypto
import NativePostgres
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// Issue 12 §2: while PostgreSQL is unreachable `/healthz` is 503 and a request that needs the
/// index gets `503 store unavailable` with `Retry-After`; once it is back, the same requests work.
@Suite("up-server while PostgreSQL is down")
struct PostgresOutageTests {
    @Test func healthAndRequestsAre503WhileTheDatabaseIsDownAndRecover() async throws {
        let cluster = try await PostgresCluster.start()
        defer { Task { await cluster.stop() } }
        let url = try await cluster.createDatabase("outage")
        let pool = PostgresPool(
            try PostgresConnectionString(url),
            configuration: .init(maxConnections: 2, acquireTimeout: .seconds(1), maxBackoff: .milliseconds(200)))
        let index = PostgresUpIndex(pool: pool)
        try await index.migrate()
        let secret = "test-context-secret-0123456789"
        let clock = ManualClock(1_900_000_000)
        let server = UpServer(
            configuration: UpServerConfiguration(
                keys: [UpServerHarness.accessKey: UpServerHarness.secretKey], buckets: [UpServerHarness.bucket],
                contextSecret: secret),
            stores: UpStores(blobs: InMemoryBlockStore(), index: index, outbox: index.outbox),
            callbacks: ScriptedCallbacks(), contextSecret: Array(secret.utf8), clock: clock,
            logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
        let token = UpToken.sign(
            PutPolicy(scope: UpServerHarness.bucket, deadline: 1_900_003_600), accessKey: UpServerHarness.accessKey,
            mac: HMACSHA1(key: Array(UpServerHarness.secretKey.utf8)))
        func send(_ method: HTTPMethod, _ target: String, body: [UInt8] = []) async -> Response {
            await server.router.respond(
                to: Request(
                    method: method, target: target, headers: ["Authorization": "UpToken \(token)"], body: body),
                logger: Logger(label: "up-test", sink: LogSink.memory()))
        }

        #expect(await send(.get, "/healthz").status == 200)
        #expect(await send(.post, "/mkblk/5", body: Array("hello".utf8)).status == 200)

        try await cluster.pause()
        #expect(await send(.get, "/healthz").status == 503)
        let refused = await send(.post, "/mkblk/5", body: Array("hello".utf8))
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == String(UpError.retryAfterSeconds))
        #expect(String(decoding: refused.bodyBytes, as: UTF8.self) == #"{"error":"store unavailable"}"#)

        try await cluster.resume()
        var healthy = false
        for _ in 0..<50 where !healthy {  // bounded: the pool's backoff is at most 200 ms
            healthy = await send(.get, "/healthz").status == 200
            if !healthy { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(healthy)
        #expect(await send(.post, "/mkblk/5", body: Array("hello".utf8)).status == 200)
        pool.close()
    }
}
