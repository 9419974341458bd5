@testable import BizServer
import NativePostgres
import Testing

/// Which token-bucket state a contract test runs against: the in-process limiter (the embedded
/// default) and the PostgreSQL rows every instance shares.
enum RateLimitKind: String, CaseIterable, CustomTestStringConvertible {
    case inProcess
    case postgres

    var testDescription: String { rawValue }

    /// A factory; with PostgreSQL, one fresh database per call.
    func factory() async throws -> RateLimitFactory {
        switch self {
        case .inProcess: RateLimiter.inProcess
        case .postgres: try await postgresBizDatabase().rateLimits
        }
    }
}

/// The `RateLimitState` contract: the arithmetic of `TokenBucket` (burst, refill, the seconds to
/// wait, a clock stepping back mints nothing), per key and per scope.
@Suite struct RateLimitStateContractTests {
    static let rate = BizServerConfiguration.RateLimit(tokensPerSecond: 2, burst: 3)

    @Test(arguments: RateLimitKind.allCases)
    func allowsTheBurstThenSaysHowLongToWait(kind: RateLimitKind) async throws {
        let limiter = try await kind.factory()("client", Self.rate)
        for _ in 0..<3 { #expect(try await limiter.take(key: "demo", now: 100) == nil) }
        #expect(try await limiter.take(key: "demo", now: 100) == 1)  // 0.5 s, rounded up
        #expect(try await limiter.take(key: "demo", now: 100.25) == 1)
        #expect(try await limiter.take(key: "demo", now: 100.5) == nil)  // one token refilled
        #expect(try await limiter.take(key: "demo", now: 100.5) == 1)
    }

    /// The form a request with no task uses (biz-server's token route on PostgreSQL): the same
    /// bucket, the same answers.
    @Test(arguments: RateLimitKind.allCases)
    func theTakeWithACallbackSpendsFromTheSameBucket(kind: RateLimitKind) async throws {
        let limiter = try await kind.factory()("client", Self.rate)
        func take(_ now: Double) async throws -> Int? {
            try await withCheckedContinuation { continuation in
                limiter.take(key: "demo", now: now) { continuation.resume(returning: $0) }
            }.get()
        }
        #expect(try await take(100) == nil)
        #expect(try await limiter.take(key: "demo", now: 100) == nil)
        #expect(try await take(100) == nil)
        #expect(try await take(100) == 1)
        #expect(try await limiter.take(key: "demo", now: 100) == 1)
        #expect(try await take(100.5) == nil)
    }

    @Test(arguments: RateLimitKind.allCases)
    func refillStopsAtTheBurstAndAClockSteppingBackMintsNothing(kind: RateLimitKind) async throws {
        let limiter = try await kind.factory()("client", BizServerConfiguration.RateLimit(tokensPerSecond: 1, burst: 2))
        #expect(try await limiter.take(key: "k", now: 50) == nil)
        #expect(try await limiter.take(key: "k", now: 50) == nil)
        #expect(try await limiter.take(key: "k", now: 10) != nil)
        #expect(try await limiter.take(key: "k", now: 50.5) != nil)
        #expect(try await limiter.take(key: "k", now: 51) == nil)
        #expect(try await limiter.take(key: "k", now: 10_000) == nil)
        #expect(try await limiter.take(key: "k", now: 10_000) == nil)
        #expect(try await limiter.take(key: "k", now: 10_000) != nil)  // capped at the burst of 2
    }

    @Test(arguments: RateLimitKind.allCases)
    func keysAndScopesHaveTheirOwnBuckets(kind: RateLimitKind) async throws {
        let factory = try await kind.factory()
        let rate = BizServerConfiguration.RateLimit(tokensPerSecond: 1, burst: 1)
        let clients = factory("client", rate)
        let users = factory("user:demo", rate)
        #expect(try await clients.take(key: "a", now: 1) == nil)
        #expect(try await clients.take(key: "a", now: 1) != nil)
        #expect(try await clients.take(key: "b", now: 1) == nil)
        #expect(try await users.take(key: "a", now: 1) == nil)
    }

    /// Two instances (two pools) spending one client's bucket at once: exactly the burst is
    /// allowed in all, whichever instance each request lands on.
    @Test func instancesShareOneBucket() async throws {
        let first = try await postgresBizDatabase()
        let second = try await postgresBizDatabase(sharing: first)
        let rate = BizServerConfiguration.RateLimit(tokensPerSecond: 0.001, burst: 10)
        let limiters = [first.rateLimits("client", rate), second.rateLimits("client", rate)]
        let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                group.addTask { try await limiters[index % 2].take(key: "demo", now: 1_000) == nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 10)
    }

    /// Full buckets are pruned (they are the same as missing ones); a bucket still refilling stays.
    @Test func prunesOnlyBucketsThatHaveRefilledCompletely() async throws {
        let database = try await postgresBizDatabase()
        let slow = database.rateLimits("client", BizServerConfiguration.RateLimit(tokensPerSecond: 1, burst: 10))
        let fast = database.rateLimits("user:demo", BizServerConfiguration.RateLimit(tokensPerSecond: 100, burst: 10))
        for _ in 0..<5 {
            _ = try await slow.take(key: "a", now: 100)
            _ = try await fast.take(key: "u", now: 100)
        }
        #expect(try await database.pruneRateBuckets(now: 100.01) == 0)
        #expect(try await database.pruneRateBuckets(now: 101) == 1)  // the fast one has refilled, the slow one not
        #expect(try await slow.take(key: "a", now: 101) == nil)  // kept: 5 + 1 tokens, one taken
        #expect(try await database.pruneRateBuckets(now: 106) == 1)
        let rows = try await database.pool.withConnection { try $0.query("SELECT count(*) FROM biz_rate_buckets").first?.decode(0, as: Int64.self) }
        #expect(rows == 0)
    }
}
