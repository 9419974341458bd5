import BizServer
import Testing

@Suite("TokenBucket")
struct TokenBucketTests {
    @Test func allowsABurstThenLimitsWithTheTimeToTheNextToken() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 3, now: 100)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .limited(retryAfter: 0.5))
        #expect(bucket.take(now: 100.25) == .limited(retryAfter: 0.25))
        #expect(bucket.take(now: 100.5) == .allowed)
    }

    @Test func refillNeverExceedsTheBurst() {
        var bucket = TokenBucket(ratePerSecond: 1, burst: 2, now: 0)
        #expect(bucket.take(now: 1_000) == .allowed)
        #expect(bucket.take(now: 1_000) == .allowed)
        #expect(bucket.take(now: 1_000) != .allowed)
    }

    @Test func aClockSteppingBackMintsNothing() {
        var bucket = TokenBucket(ratePerSecond: 1, burst: 1, now: 50)
        #expect(bucket.take(now: 50) == .allowed)
        #expect(bucket.take(now: 10) != .allowed)
        #expect(bucket.take(now: 50.5) != .allowed)
        #expect(bucket.take(now: 51) == .allowed)
    }
}
