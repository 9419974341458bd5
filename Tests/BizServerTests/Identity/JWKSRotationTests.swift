import Basics
import BizServer
import Foundation
import HTTPKit
import Synchronization
import TestSupport
import Testing

/// A JWKS endpoint on 127.0.0.1:0 whose document and status a test changes.
final class JWKSProvider: Sendable {
    struct Served: Sendable {
        var status = 200
        var body: [UInt8] = []
        var requests = 0
    }

    private let served: Locked<Served>
    let server: HTTPServer
    let port: Int

    init() throws {
        let served = Locked(Served())
        var router = Router()
        router.getSync("/.well-known/jwks.json") { _, _ in
            served.update { $0.requests += 1 }
            let now = served.value
            return Response(status: now.status, headers: ["Content-Type": "application/json"], body: now.body)
        }
        self.served = served
        server = HTTPServer(
            configuration: .init(threadCount: 1, handlerTimeout: .seconds(5), shutdownGracePeriod: .seconds(1)),
            router: router, logger: Logger(label: "jwks", sink: .memory()))
        port = try server.start()
    }

    var url: String { "http://127.0.0.1:\(port)/.well-known/jwks.json" }
    var requests: Int { served.value.requests }
    func serve(_ body: [UInt8], status: Int = 200) { served.update { $0.body = body; $0.status = status } }
}

/// Shared mutable test state that escaping handler closures can capture.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}

/// An identity provider's JWKS served on loopback, rotated under a biz-server that fetches it
/// with the project's HTTP client (CurlTransport); time is the harness's manual clock.
@Suite("JWKS from jwksURL")
struct JWKSRotationTests {
    static func setUp() async throws -> (BizServerHarness, JWTFixture, JWKSProvider) {
        let fixture = try await JWTFixture.load()
        let provider = try JWKSProvider()
        let harness = BizServerHarness(jwt: try fixture.configuration(keys: .url(provider.url)))
        return (harness, fixture, provider)
    }

    @Test func aNewKidIsPickedUpAtMostOnceAMinuteAndAWithdrawnKeyStopsWorking() async throws {
        let (harness, fixture, provider) = try await Self.setUp()
        defer { Task { await provider.server.shutdown() } }
        provider.serve(fixture.jwks)
        let old = fixture.token("valid_rs256"), new = fixture.token("valid_rotated")

        // The first JWT fetches the set.
        #expect(await harness.endUserToken(jwt: old).status == 200)
        #expect(provider.requests == 1)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_es256")).status == 200)
        #expect(provider.requests == 1, "known kids are served from the cache")

        // The provider rotates to rsa-2. Within the minute an unknown kid is refused without a fetch.
        provider.serve(fixture.jwksRotated)
        harness.clock.advance(by: 30)
        let early = await harness.endUserToken(jwt: new)
        #expect(early.status == 401 && early.errorText == "JWT key id (kid) not in the key set")
        #expect(provider.requests == 1)

        // After a minute the unknown kid triggers one fetch, and the request that asked succeeds.
        harness.clock.advance(by: 31)
        #expect(await harness.endUserToken(jwt: new).status == 200)
        #expect(provider.requests == 2)
        // rsa-1 was withdrawn with that fetch.
        #expect(await harness.endUserToken(jwt: old).status == 401)
        #expect(provider.requests == 2)
        #expect(harness.server.metrics.value("upgate_biz_jwks_fetches_total", ["ok"]) == 2)
        let log = harness.logs.capturedLines.joined()
        #expect(log.contains("JWKS fetched") && log.contains("rsa-2"))
    }

    @Test func aFailedFetchKeepsTheKeysThereAre() async throws {
        let (harness, fixture, provider) = try await Self.setUp()
        defer { Task { await provider.server.shutdown() } }
        provider.serve(fixture.jwks)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_rs256")).status == 200)

        provider.serve(Array("upstream exploded".utf8), status: 500)
        harness.clock.advance(by: 61)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_rotated")).status == 401)
        #expect(provider.requests == 2)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_rs256")).status == 200, "old keys kept")

        // A body that is not a key set is a failure too, and also keeps them.
        provider.serve(Array(#"{"keys":"no"}"#.utf8))
        harness.clock.advance(by: 61)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_rotated")).status == 401)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_eddsa")).status == 200)
        #expect(harness.server.metrics.value("upgate_biz_jwks_fetches_total", ["failed"]) == 2)
        #expect(harness.logs.capturedLines.joined().contains("JWKS fetch failed"))
    }

    @Test func withoutAnySetTheServerSays503UntilTheProviderAnswers() async throws {
        let (harness, fixture, provider) = try await Self.setUp()
        defer { Task { await provider.server.shutdown() } }
        provider.serve([], status: 503)
        let down = await harness.endUserToken(jwt: fixture.token("valid_rs256"))
        #expect(down.status == 503)
        #expect(down.errorText == "the identity provider's keys are unavailable, retry later")
        #expect(down.headers["Retry-After"] == "60")
        // HS256 needs no key set: the shared secret still works while the provider is down.
        #expect(await harness.endUserToken(jwt: fixture.token("valid_hs256")).status == 200)

        provider.serve(fixture.jwks)
        harness.clock.advance(by: 60)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_rs256")).status == 200)
        #expect(provider.requests == 2)
    }

    @Test func concurrentRequestsShareOneFetch() async throws {
        let (harness, fixture, provider) = try await Self.setUp()
        defer { Task { await provider.server.shutdown() } }
        provider.serve(fixture.jwks)
        let token = fixture.token("valid_es256")
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { await harness.endUserToken(jwt: token).status } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 16))
        #expect(provider.requests == 1)
    }
}
