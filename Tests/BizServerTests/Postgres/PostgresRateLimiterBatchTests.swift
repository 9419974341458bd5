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

    @Test func aFailingStatementAnswersItsWholeBatchWithStoreUnavailableAndLaterTakesWork() async throws {
        let (limiter, database) = try await Self.limiter()
        #expect(try await limiter.take(key: "demo", now: 1_000) == nil)  // the row exists
        // Another session renames the table, uncommitted: the next statement waits on its lock,
        // and finds no table once the rename commits.
        let admin = try PostgresConnection(database.pool.connectionString)
        try admin.execute("BEGIN; ALTER TABLE biz_rate_buckets RENAME TO biz_rate_buckets_away")
        let failures = Task {
            await withTaskGroup(of: BizError?.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        do throws(BizError) { _ = try await limiter.take(key: "demo", now: 1_000) } catch { return error }
                        return nil
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        // Both: the lone take counts its statement just after marking the key busy.
        for _ in 0..<500 where limiter.queued < 19 || limiter.statements < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(limiter.statements == 2 && limiter.queued == 19)  // one blocked, the rest behind it
        try admin.execute("COMMIT")
        let errors = await failures.value
        #expect(errors.count == 20 && errors.allSatisfy { $0 == .storeUnavailable })
        #expect(limiter.statements == 3)  // the blocked one, then one for the 19
        try admin.execute("ALTER TABLE biz_rate_buckets_away RENAME TO biz_rate_buckets")
        #expect(try await Self.tokensLeft(database) == 49)  // nothing was spent by the failures
        #expect(try await limiter.take(key: "demo", now: 1_000) == nil)
        #expect(try await Self.tokensLeft(database) == 48)
    }

    /// 599 takes queued behind one blocked statement are answered in batches of at most
    /// `maximumBatch` (256 + 256 + 87): the cap bounds a batch, and the burst is still exact.
    @Test func aLongQueueIsAnsweredInBatchesOfAtMostTheMaximum() async throws {
        let (limiter, database) = try await Self.limiter()
        #expect(try await limiter.take(key: "demo", now: 1_000) == nil)  // the row exists
        let admin = try PostgresConnection(database.pool.connectionString)
        try admin.execute("BEGIN; LOCK TABLE biz_rate_buckets IN ACCESS EXCLUSIVE MODE")
        let answers = Task {
            await withTaskGroup(of: Int??.self) { group in
                for _ in 0..<600 { group.addTask { try? await limiter.take(key: "demo", now: 1_000) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        for _ in 0..<1_000 where limiter.queued < 599 || limiter.statements < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(limiter.statements == 2 && limiter.queued == 599)
        try admin.execute("COMMIT")
        let all = await answers.value
        #expect(all.count == 600 && all.allSatisfy { $0 != nil })  // none failed
        #expect(all.filter { $0 == .some(nil) }.count == 49)
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
