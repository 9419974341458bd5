import Synchronization

/// One ``TokenBucket`` per client id, behind one lock. Buckets are created full on first use.
final class RateLimiter: Sendable {
    private let rate: BizServerConfiguration.RateLimit
    private let buckets = Mutex<[String: TokenBucket]>([:])

    init(_ rate: BizServerConfiguration.RateLimit) { self.rate = rate }

    /// Takes a token for `clientID` at `now`, or throws 429 with the whole seconds to wait.
    func take(clientID: String, now: Double) throws(BizError) {
        let decision = buckets.withLock { buckets in
            var bucket = buckets[clientID] ?? TokenBucket(ratePerSecond: rate.tokensPerSecond, burst: rate.burst, now: now)
            let decision = bucket.take(now: now)
            buckets[clientID] = bucket
            return decision
        }
        if case .limited(let retryAfter) = decision {
            throw BizError.rateLimited(retryAfter: max(1, Int(retryAfter.rounded(.up))))
        }
    }
}
