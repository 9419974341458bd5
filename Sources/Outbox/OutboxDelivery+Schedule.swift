extension OutboxDelivery {
    /// When a failed attempt is tried again: exponential backoff with a cap, and a last attempt
    /// after which the message is dead.
    public struct Schedule: Sendable, Hashable {
        /// Attempts in all, the first included (≥ 1). After the last one fails the message is dead.
        public var maxAttempts: Int
        /// Seconds before the second attempt; doubled for each later one.
        public var firstDelay: Int64
        /// The longest delay, seconds.
        public var maxDelay: Int64

        /// Creates a schedule.
        ///
        /// - Parameters:
        ///   - maxAttempts: Attempts in all (values below 1 count as 1).
        ///   - firstDelay: Seconds before the second attempt.
        ///   - maxDelay: Cap on any delay, seconds.
        public init(maxAttempts: Int, firstDelay: Int64, maxDelay: Int64) {
            self.maxAttempts = max(1, maxAttempts)
            self.firstDelay = firstDelay
            self.maxDelay = maxDelay
        }

        /// The wait after attempt `attempt` (1-based) failed: `firstDelay × 2^(attempt−1)`,
        /// capped at `maxDelay`; `nil` when it was the last attempt.
        public func delay(afterAttempt attempt: Int) -> Int64? {
            guard attempt < maxAttempts else { return nil }
            let exponent = Int64(min(max(attempt - 1, 0), 30))
            return min(maxDelay, firstDelay << exponent)
        }
    }
}
