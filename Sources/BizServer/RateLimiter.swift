import Synchronization

/// One ``TokenBucket`` per key (a client id, or an end user), behind one lock. Buckets are
/// created full on first use.
///
/// End users are many and come and go, so buckets that have refilled completely (and are thus
/// no different from new ones) are dropped once the map grows past `pruneThreshold`; the
/// threshold then doubles with the live population, so pruning stays amortized O(1).
final class RateLimiter: Sendable {
    private struct State {
        var buckets: [String: TokenBucket] = [:]
        var pruneAt = RateLimiter.pruneThreshold
    }

    static let pruneThreshold = 4096
    private let rate: BizServerConfiguration.RateLimit
    private let state = Mutex(State())

    /// A limiter whose buckets all have `rate`.
    init(_ rate: BizServerConfiguration.RateLimit) { self.rate = rate }

    /// Takes a token for `clientID` at `now`, or throws 429 with the whole seconds to wait.
    func take(clientID: String, now: Double) throws(BizError) {
        if let retryAfter = take(key: clientID, now: now) { throw BizError.rateLimited(retryAfter: retryAfter) }
    }

    /// Takes a token for `key` at `now`; nil when allowed, else the whole seconds to wait (≥ 1).
    func take(key: String, now: Double) -> Int? {
        let decision = state.withLock { state in
            var bucket = state.buckets[key] ?? TokenBucket(ratePerSecond: rate.tokensPerSecond, burst: rate.burst, now: now)
            let decision = bucket.take(now: now)
            state.buckets[key] = bucket
            if state.buckets.count > state.pruneAt {
                state.buckets = state.buckets.filter { !$0.value.isFull(at: now) }
                state.pruneAt = max(Self.pruneThreshold, state.buckets.count * 2)
            }
            return decision
        }
        guard case .limited(let retryAfter) = decision else { return nil }
        return max(1, Int(retryAfter.rounded(.up)))
    }

    /// Number of buckets held (tests).
    var count: Int { state.withLock { $0.buckets.count } }
}
