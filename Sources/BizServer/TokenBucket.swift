/// A token-bucket rate limiter for one client, as a pure value: time comes in as an argument.
///
/// The bucket holds up to `burst` tokens and refills at `ratePerSecond`. Each issued upload token
/// costs one. When empty, ``take(now:)`` says how long until the next token — the `Retry-After`
/// the server sends with its 429.
public struct TokenBucket: Sendable, Equatable {
    /// Refill rate in tokens per second (> 0).
    public let ratePerSecond: Double
    /// Capacity, and the number of tokens a new bucket starts with (≥ 1).
    public let burst: Double
    private var tokens: Double
    private var updatedAt: Double

    /// Creates a full bucket at time `now` (seconds).
    public init(ratePerSecond: Double, burst: Double, now: Double) {
        precondition(ratePerSecond > 0 && burst >= 1, "rate must be > 0 and burst ≥ 1")
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.tokens = burst
        self.updatedAt = now
    }

    /// The outcome of one ``take(now:)``.
    public enum Decision: Sendable, Equatable {
        /// A token was taken.
        case allowed
        /// The bucket is empty; retry after this many seconds (> 0).
        case limited(retryAfter: Double)
    }

    /// Takes one token if available at time `now`.
    public mutating func take(now: Double) -> Decision {
        // A clock that steps backwards (NTP) must not mint tokens or lock a client out.
        let elapsed = max(0, now - updatedAt)
        tokens = min(burst, tokens + elapsed * ratePerSecond)
        updatedAt = max(updatedAt, now)
        if tokens >= 1 {
            tokens -= 1
            return .allowed
        }
        return .limited(retryAfter: (1 - tokens) / ratePerSecond)
    }

    /// Whether the bucket will have refilled completely by `now`: it is then the same as a new
    /// one, so a limiter may forget it.
    public func isFull(at now: Double) -> Bool {
        tokens + max(0, now - updatedAt) * ratePerSecond >= burst
    }
}
