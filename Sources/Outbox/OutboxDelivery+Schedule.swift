extension OutboxDelivery {
    /// When a failed attempt is tried again, and after which attempt a message is dead: either
    /// exponential backoff with a cap (up-server's callbacks) or an explicit list of delays
    /// (biz-server's webhooks, `retryScheduleSeconds`), each delay stretched by up to
    /// ``jitterFraction`` so receivers that failed together are not retried together.
    ///
    /// The jitter itself is an argument (``delay(afterAttempt:jitter:)``): the schedule stays pure,
    /// the worker draws the random number.
    public struct Schedule: Sendable, Hashable {
        /// Attempts in all, the first included (≥ 1). After the last one fails the message is dead.
        public var maxAttempts: Int
        /// Seconds before the second attempt; doubled for each later one (exponential form).
        public var firstDelay: Int64
        /// The longest delay, seconds (exponential form).
        public var maxDelay: Int64
        /// Explicit delays: element `n - 1` is the wait after attempt `n` failed (list form);
        /// nil for the exponential form.
        public var retryDelays: [Int64]?
        /// Largest share of a delay added as jitter, 0…1 (0.1: up to 10 % longer).
        public var jitterFraction: Double

        /// Creates an exponential schedule.
        ///
        /// - Parameters:
        ///   - maxAttempts: Attempts in all (values below 1 count as 1).
        ///   - firstDelay: Seconds before the second attempt.
        ///   - maxDelay: Cap on any delay, seconds.
        ///   - jitterFraction: Largest share of a delay added as jitter (default none).
        public init(maxAttempts: Int, firstDelay: Int64, maxDelay: Int64, jitterFraction: Double = 0) {
            self.maxAttempts = max(1, maxAttempts)
            self.firstDelay = firstDelay
            self.maxDelay = maxDelay
            self.retryDelays = nil
            self.jitterFraction = min(max(jitterFraction, 0), 1)
        }

        /// Creates a schedule from explicit waits: `retryDelays[n - 1]` seconds after attempt `n`
        /// failed; `retryDelays.count + 1` attempts in all.
        public init(retryDelays: [Int64], jitterFraction: Double = 0) {
            let delays = retryDelays.map { max($0, 0) }
            self.maxAttempts = delays.count + 1
            self.firstDelay = delays.first ?? 0
            self.maxDelay = delays.max() ?? 0
            self.retryDelays = delays
            self.jitterFraction = min(max(jitterFraction, 0), 1)
        }

        /// The wait after attempt `attempt` (1-based) failed — `firstDelay × 2^(attempt−1)` capped
        /// at `maxDelay`, or the list's element — plus `jitter × jitterFraction` of it; `nil` when
        /// it was the last attempt.
        ///
        /// - Parameter jitter: A number in 0..<1 (the worker draws it; 0 means no jitter).
        public func delay(afterAttempt attempt: Int, jitter: Double = 0) -> Int64? {
            guard attempt < maxAttempts else { return nil }
            let base: Int64
            if let retryDelays {
                base = retryDelays[min(max(attempt - 1, 0), retryDelays.count - 1)]
            } else {
                let exponent = Int64(min(max(attempt - 1, 0), 30))
                base = min(maxDelay, firstDelay << exponent)
            }
            let sample = min(max(jitter, 0), 1)
            return base + Int64((Double(base) * jitterFraction * sample).rounded(.down))
        }
    }
}
