/// Where token buckets live: the role behind the per-client and per-end-user limits.
///
/// Two implementations: ``RateLimiter`` (in-process, the embedded default: a map behind a lock,
/// answered without suspending) and ``PostgresRateLimiter`` (one row per bucket in the shared
/// database, so every instance spends from the same bucket). Both keep ``TokenBucket``'s
/// arithmetic: refill at `tokensPerSecond` up to `burst`, one token per issued upload token.
public protocol RateLimitState: Sendable {
    /// Takes a token for `key` at `now` (Unix seconds); nil when allowed, else the whole seconds
    /// to wait (≥ 1).
    ///
    /// - Throws: `BizError.storeUnavailable` when shared state cannot be reached (503: nothing
    ///   was issued, the caller retries).
    func take(key: String, now: Double) async throws(BizError) -> Int?

    /// ``take(key:now:)`` for a caller with no task: `deliver` gets its answer, on whatever
    /// thread the limiter answers from. The default runs the async take in a task.
    func take(key: String, now: Double, then deliver: @escaping @Sendable (Result<Int?, BizError>) -> Void)
}

extension RateLimitState {
    public func take(key: String, now: Double, then deliver: @escaping @Sendable (Result<Int?, BizError>) -> Void) {
        Task {
            do throws(BizError) { deliver(.success(try await take(key: key, now: now))) } catch { deliver(.failure(error)) }
        }
    }
}

extension RateLimiter: RateLimitState {}

/// Makes the limiter of one scope (`"client"`, `"user:<client id>"`) with one rate: how the
/// server builds its limiters without knowing where their state lives.
public typealias RateLimitFactory = @Sendable (_ scope: String, _ rate: BizServerConfiguration.RateLimit) -> any RateLimitState

extension RateLimiter {
    /// The in-process factory (the embedded default): the scope is the limiter itself.
    static let inProcess: RateLimitFactory = { _, rate in RateLimiter(rate) }
}
