import Foundation
public import NativePostgres

/// Token buckets shared by every instance: one row per (scope, key) in `biz_rate_buckets`,
/// refilled and spent by ONE `INSERT … ON CONFLICT DO UPDATE` statement.
///
/// The statement is the whole algorithm of ``TokenBucket``: a new key gets a full bucket minus
/// the token it takes; an existing row is refilled for the time since `updated_at` (never for a
/// clock that stepped back), capped at `burst`, and loses one token if it has one. PostgreSQL
/// locks the row for the update, so concurrent requests on any instance take turns on it and no
/// token is spent twice; one round trip per token request, no transaction, no read-modify-write.
/// `allowed` and the level are returned by the same statement. The table is UNLOGGED: a token
/// request writes no WAL and waits for no flush; what a crash loses is only that buckets are full.
///
/// Times are the instances' clocks (Unix seconds, as the in-process limiter); instances whose
/// clocks differ by a few milliseconds only shift a refill by as much.
public struct PostgresRateLimiter: RateLimitState {
    private let pool: PostgresPool
    private let scope: String
    private let rate: BizServerConfiguration.RateLimit

    /// The limiter of `scope` with `rate`, in the database behind `pool` (migrated by
    /// ``PostgresBizDatabase``).
    public init(pool: PostgresPool, scope: String, rate: BizServerConfiguration.RateLimit) {
        self.pool = pool
        self.scope = scope
        self.rate = rate
    }

    static let take = """
        INSERT INTO biz_rate_buckets AS b (scope, bucket_key, tokens, updated_at, allowed, rate, burst)
        VALUES ($1, $2, $3::float8 - 1, $4::float8, true, $5::float8, $3::float8)
        ON CONFLICT (scope, bucket_key) DO UPDATE SET
            rate = $5::float8, burst = $3::float8,
            tokens = CASE
                WHEN least($3::float8, b.tokens + greatest(0, $4::float8 - b.updated_at) * $5::float8) >= 1
                THEN least($3::float8, b.tokens + greatest(0, $4::float8 - b.updated_at) * $5::float8) - 1
                ELSE least($3::float8, b.tokens + greatest(0, $4::float8 - b.updated_at) * $5::float8) END,
            allowed = least($3::float8, b.tokens + greatest(0, $4::float8 - b.updated_at) * $5::float8) >= 1,
            updated_at = greatest(b.updated_at, $4::float8)
        RETURNING allowed, tokens
        """

    /// See ``RateLimitState/take(key:now:)``.
    public func take(key: String, now: Double) async throws(BizError) -> Int? {
        let parameters: [PostgresValue] = [
            .text(scope), .text(key), .double(rate.burst), .double(now), .double(rate.tokensPerSecond),
        ]
        let row: PostgresRow?
        do {
            row = try await pool.withConnection { try $0.query(Self.take, parameters).first }
        } catch {
            throw BizError.storeUnavailable.with(detail: "\(error)")
        }
        guard let row, let allowed = try? row.decode(0, as: Bool.self), let tokens = try? row.decode(1, as: Double.self)
        else { throw BizError.storeUnavailable.with(detail: "rate limit statement returned no row") }
        if allowed { return nil }
        return max(1, Int(((1 - tokens) / rate.tokensPerSecond).rounded(.up)))
    }
}
