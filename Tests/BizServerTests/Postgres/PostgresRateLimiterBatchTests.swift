@testable import BizServer
import NativePostgres
import Testing

/// `PostgresRateLimiter` batching: takes for one key that queue behind its statement in flight
/// are answered by one statement, which spends exactly what the bucket has, fails as a whole,
/// and loses no token to cancelled callers.
@Suite struct PostgresRateLimiterBatchTests {
    static let rate = BizServerConfiguration.RateLimit(tokensPerSecond: 0.001, burst: 50)

    /// A limiter on a fresh database whose pool has one connection, so statements queue up.
    static func limiter() async throws -> (PostgresRateLimiter, PostgresBizDatabase) {
        let database = try await postgresBizDatabase(maxConnections: 1)
        return (PostgresRateLimiter(pool: database.pool, scope: "client", rate: rate), database)
    }

    /// The tokens left in the bucket of `key` (the clock never moves here, so nothing refills).
    static func tokensLeft(_ database: PostgresBizDatabase, key: String = "demo") async throws -> Double? {
        try await database.pool.withConnection {
            try $0.query("SELECT tokens FROM biz_rate_buckets WHERE bucket_key = $1", [.text(key)]).first?.decode(0, as: Double.self)
        }
    }

    @Test func concurrentTakesOnOneInstanceSpendExactlyTheBurstInFewStatements() async throws {
        let (limiter, database) = try await Self.limiter()
        let answers = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<200 { group.addTask { try await limiter.take(key: "demo", now: 1_000) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.filter { $0 == nil }.count == 50)
        #expect(answers.compactMap { $0 }.allSatisfy { $0 == 1_000 })  // one token at 0.001/s
        #expect(try await Self.tokensLeft(database) == 0)
        #expect(limiter.statements < 100, "\(limiter.statements) statements for 200 takes: no batching")
        #expect(limiter.queued == 0)
        // The queue emptied, so the next take is a lone statement again.
        #expect(try await limiter.take(key: "demo", now: 2_000) == nil)
        #expect(limiter.statements < 101)
    }

    /// Spends one token (the row exists), then has another session run `lock` in a transaction
    /// it leaves open, and starts `count` takes: the first one's statement waits on the lock, the
    /// others queue behind it. Returns when they have; the caller commits `session` to let them go.
    static func takesBehindALock(
        _ limiter: PostgresRateLimiter, _ database: PostgresBizDatabase, lock: String, count: Int
    ) async throws -> (answers: Task<[Result<Int?, BizError>], Never>, session: PostgresConnection) {
        #expect(try await limiter.take(key: "demo", now: 1_000) == nil)
        let session = try PostgresConnection(database.pool.connectionString)
        try session.execute("BEGIN; \(lock)")
        let answers = Task {
            await withTaskGroup(of: Result<Int?, BizError>.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        do throws(BizError) { return .success(try await limiter.take(key: "demo", now: 1_000)) } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        // Both: the lone take counts its statement just after marking the key busy.
        for _ in 0..<1_000 where limiter.queued < count - 1 || limiter.statements < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(limiter.statements == 2 && limiter.queued == count - 1)  // one blocked, the rest behind it
        return (answers, session)
    }

    @Test func aFailingStatementAnswersItsWholeBatchWithStoreUnavailableAndLaterTakesWork() async throws {
        let (limiter, database) = try await Self.limiter()
        // The table renamed, uncommitted: the blocked statement finds no table once it commits.
        let (answers, session) = try await Self.takesBehindALock(
            limiter, database, lock: "ALTER TABLE biz_rate_buckets RENAME TO biz_rate_buckets_away", count: 20)
        try session.execute("COMMIT")
        let all = await answers.value
        #expect(all.count == 20 && all.allSatisfy { $0 == .failure(.storeUnavailable) })
        #expect(limiter.statements == 3)  // the blocked one, then one for the 19
        try session.execute("ALTER TABLE biz_rate_buckets_away RENAME TO biz_rate_buckets")
        #expect(try await Self.tokensLeft(database) == 49)  // nothing was spent by the failures
        #expect(try await limiter.take(key: "demo", now: 1_000) == nil)
        #expect(try await Self.tokensLeft(database) == 48)
    }

    /// 599 takes queued behind one blocked statement are answered in batches of at most
    /// `maximumBatch` (256 + 256 + 87): the cap bounds a batch, and the burst is still exact.
    @Test func aLongQueueIsAnsweredInBatchesOfAtMostTheMaximum() async throws {
        let (limiter, database) = try await Self.limiter()
        let (answers, session) = try await Self.takesBehindALock(
            limiter, database, lock: "LOCK TABLE biz_rate_buckets IN ACCESS EXCLUSIVE MODE", count: 600)
        try session.execute("COMMIT")
        let all = try await answers.value.map { try $0.get() }  // none failed
        #expect(all.count == 600 && all.filter { $0 == nil }.count == 49)
        #expect(limiter.statements == 2 + 3, "\(limiter.statements - 2) statements for 599 queued takes")
        #expect(try await Self.tokensLeft(database) == 0)
    }

    /// Callers cancelled while queued are still answered by their batch, so every token the
    /// statements spent was handed to a caller, and none twice.
    @Test func cancelledCallersNeitherLoseNorDoubleSpendTokens() async throws {
        let (limiter, database) = try await Self.limiter()
        let answers = await withTaskGroup(of: Int??.self) { group in
            for _ in 0..<120 { group.addTask { try? await limiter.take(key: "demo", now: 1_000) } }
            group.cancelAll()
            return await group.reduce(into: []) { $0.append($1) }
        }
        let allowed = answers.filter { $0 == .some(nil) }.count
        let left = try await Self.tokensLeft(database) ?? 50
        #expect(left >= 0 && Double(allowed) + left == 50)
    }
}
