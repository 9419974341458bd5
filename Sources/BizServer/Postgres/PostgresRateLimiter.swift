import Foundation
public import NativePostgres
import Synchronization

/// Token buckets shared by every instance: one row per (scope, key) in `biz_rate_buckets`,
/// refilled and spent by ONE `INSERT … ON CONFLICT DO UPDATE` statement per batch of takes.
///
/// The statement is the whole algorithm of ``TokenBucket``, for `n` takes at once: a new key
/// gets a full bucket; an existing row is refilled for the time since `updated_at` (never for a
/// clock that stepped back), capped at `burst`; then `granted = least(n, floor(level))` tokens
/// are spent, and `granted` and the tokens left are returned by the same statement (stored in
/// the row's `granted` column: PostgreSQL 15 has no `OLD` in `RETURNING`). PostgreSQL locks the
/// row for the update, so concurrent statements on any instance take turns on it and no token is
/// spent twice; no transaction, no read-modify-write. The table is UNLOGGED: a token request
/// writes no WAL and waits for no flush; what a crash loses is only that buckets are full.
///
/// Batching (within this instance, per key): a take for a key with no statement in flight runs
/// its statement at once, in its own task: one round trip, no delay. Takes arriving while a
/// statement for their key is in flight wait in FIFO order; when it returns, the next statement
/// takes up to ``maximumBatch`` of them at once (a group commit: the batch is whatever queued
/// meanwhile, no timer). Why: all of a client's requests spend one row, so one statement per
/// token made every request wait for the row lock and cost PostgreSQL a round trip and a row
/// version each. The first `granted` waiters (arrival order) are allowed; the others get the
/// seconds to wait from the tokens left, as a lone take would. If the statement fails, every
/// waiter of its batch gets `storeUnavailable` (nothing was spent) and later takes go on.
/// Queued batches run in a task of the limiter's, not a caller's, and a waiting take is not
/// withdrawn when its caller is cancelled: it is answered by its batch, so each token is spent
/// once, its caller learns of it, and one caller's cancellation fails nobody else. A take with
/// a callback (``take(key:now:then:)``) waits in the same queue and is answered from that task.
///
/// Times are the instances' clocks (Unix seconds, as the in-process limiter); a batch refills to
/// the latest `now` among its takes. Instances whose clocks differ by a few milliseconds only
/// shift a refill by as much.
public final class PostgresRateLimiter: RateLimitState {
    /// Most takes one statement answers: bounds how long the last of a batch waits.
    static let maximumBatch = 256

    private struct Waiter {
        let now: Double
        let deliver: @Sendable (Result<Int?, BizError>) -> Void
    }

    private let pool: PostgresPool
    private let scope: String
    private let rate: BizServerConfiguration.RateLimit
    /// Keys with a statement in flight, each with the takes queued behind it.
    private let queues = Mutex<[String: [Waiter]]>([:])
    private let statementsRun = Atomic<Int>(0)

    /// The limiter of `scope` with `rate`, in the database behind `pool` (migrated by
    /// ``PostgresBizDatabase``).
    public init(pool: PostgresPool, scope: String, rate: BizServerConfiguration.RateLimit) {
        self.pool = pool
        self.scope = scope
        self.rate = rate
    }

    /// Statements run so far, failed ones included (tests).
    var statements: Int { statementsRun.load(ordering: .relaxed) }
    /// Takes queued behind a statement in flight (tests).
    var queued: Int { queues.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    static let take = """
        INSERT INTO biz_rate_buckets AS b (scope, bucket_key, tokens, updated_at, allowed, granted, rate, burst)
        VALUES ($1, $2, $3::float8 - least($6::float8, floor($3::float8)), $4::float8, true,
            least($6::float8, floor($3::float8))::integer, $5::float8, $3::float8)
        ON CONFLICT (scope, bucket_key) DO UPDATE SET
            rate = $5::float8, burst = $3::float8, updated_at = greatest(b.updated_at, $4::float8),
            (tokens, granted, allowed) = (
                SELECT level - spent, spent::integer, spent > 0
                FROM (VALUES (least($3::float8, b.tokens + greatest(0, $4::float8 - b.updated_at) * $5::float8)))
                    AS refill (level),
                    LATERAL (VALUES (least($6::float8, floor(level)))) AS spend (spent))
        RETURNING granted, tokens
        """

    /// See ``RateLimitState/take(key:now:)``.
    public func take(key: String, now: Double) async throws(BizError) -> Int? {
        let idle = queues.withLock { queues in
            guard queues[key] == nil else { return false }
            queues[key] = []
            return true
        }
        if idle {
            let answer = await answers(key: key, count: 1, now: now)[0]
            if let next = nextBatch(key: key) { Task { await self.drain(key: key, next) } }
            return try answer.get()
        }
        return try await withCheckedContinuation { continuation in
            enqueue(key: key, Waiter(now: now) { continuation.resume(returning: $0) })
        }.get()
    }

    /// See ``RateLimitState/take(key:now:then:)``: queued like a take that waits, so a request
    /// needs no task of its own; `deliver` runs on the limiter's task, in batch order.
    public func take(key: String, now: Double, then deliver: @escaping @Sendable (Result<Int?, BizError>) -> Void) {
        enqueue(key: key, Waiter(now: now, deliver: deliver))
    }

    private func enqueue(key: String, _ waiter: Waiter) {
        // The statement in flight may have returned since: then this take starts the next.
        let start = queues.withLock { queues in
            let start = queues[key] == nil
            queues[key, default: []].append(waiter)
            return start
        }
        if start { Task { await self.drain(key: key, self.nextBatch(key: key) ?? []) } }
    }

    /// Answers `batch`, then the batches that queued behind it, until none is waiting.
    private func drain(key: String, _ batch: [Waiter]) async {
        var batch = batch
        while !batch.isEmpty {
            let answers = await answers(key: key, count: batch.count, now: batch.map(\.now).max()!)
            for (waiter, answer) in zip(batch, answers) { waiter.deliver(answer) }
            batch = nextBatch(key: key) ?? []
        }
    }

    /// Takes the next batch off `key`'s queue; nil (and the key idle) if nobody is waiting.
    private func nextBatch(key: String) -> [Waiter]? {
        queues.withLock { queues in
            guard let waiting = queues[key], !waiting.isEmpty else {
                queues[key] = nil
                return nil
            }
            queues[key] = Array(waiting.dropFirst(Self.maximumBatch))
            return Array(waiting.prefix(Self.maximumBatch))
        }
    }

    /// Runs the statement for `count` takes of `key` at `now`: the first `granted` answers are
    /// allowed (nil), the others the whole seconds to wait (≥ 1); all `storeUnavailable` if it fails.
    private func answers(key: String, count: Int, now: Double) async -> [Result<Int?, BizError>] {
        statementsRun.add(1, ordering: .relaxed)
        let parameters: [PostgresValue] = [
            .text(scope), .text(key), .double(rate.burst), .double(now), .double(rate.tokensPerSecond),
            .integer(Int64(count)),
        ]
        let row: PostgresRow?
        do {
            row = try await pool.withConnection { try $0.query(Self.take, parameters).first }
        } catch {
            return Array(repeating: .failure(BizError.storeUnavailable.with(detail: "\(error)")), count: count)
        }
        guard let row, let granted = try? row.decode(0, as: Int.self), let tokens = try? row.decode(1, as: Double.self)
        else {
            let error = BizError.storeUnavailable.with(detail: "rate limit statement returned no row")
            return Array(repeating: .failure(error), count: count)
        }
        let wait = max(1, Int(((1 - tokens) / rate.tokensPerSecond).rounded(.up)))
        return (0..<count).map { .success($0 < granted ? nil : wait) }
    }
}
