import Foundation

/// Which failures are retried, where, and after how long — pure: the jitter is an argument.
///
/// Classification follows Qiniu's SDKs (qiniu-protocol.md §8, §9.6): a 4xx is the caller's
/// fault and is never retried except 408 (timeout) and 429 (too many requests); 579 (stored,
/// callback failed), 612 and 701 (stale upload id / ctx) and 614 (exists) are final answers
/// about this request — 612/701 make the executor redo the upload / block instead; so are the
/// other 5xx/6xx codes Qiniu marks final (501, 509, 573, 608, 616, 618, 630–632, 640). Every
/// other status ≥ 500 and every network failure is retried, on the next up host.
struct RetryPolicy: Sendable, Equatable {
    /// What to do after a response or a transport failure.
    enum Decision: Sendable, Equatable {
        /// 2xx: done.
        case success
        /// Send again after `delay`; `nextHost` moves to the next up host first.
        case retry(delay: Duration, nextHost: Bool)
        /// 701 / 612: the ctx or upload id is stale; redo the block (v1) or the upload (v2).
        case redo
        /// 579: the object is stored but the app's callback failed (§3.4); up-server's outbox
        /// retries the callback, so neither the request nor the upload is repeated.
        case storedCallbackFailed
        /// A final answer: report it.
        case fail
    }

    /// Retries after the first attempt.
    var maxRetries: Int
    /// The first backoff; attempt n waits about `baseDelay × 2ⁿ`.
    var baseDelay: Duration
    /// The longest backoff (also caps `Retry-After`).
    var maxDelay: Duration

    /// Statuses ≥ 500 that are final answers, never retried (Python's `need_retry`, §8).
    static let finalStatuses: Set<Int> = [501, 509, 573, 579, 608, 612, 614, 616, 618, 630, 631, 632, 640, 701]

    /// Whether `status` is worth sending again (on the next host for 5xx).
    static func isRetryable(status: Int) -> Bool {
        switch status {
        case 408, 429: true
        case ..<500: false
        default: !finalStatuses.contains(status)
        }
    }

    /// The decision for a response with `status` after `attempt` retries (0 = first try).
    ///
    /// - Parameters:
    ///   - retryAfter: The `Retry-After` header (delay-seconds form), if any.
    ///   - jitter: A number in 0…1 (random in production, fixed in tests).
    func decide(status: Int, attempt: Int, retryAfter: String?, jitter: Double) -> Decision {
        if (200..<300).contains(status) { return .success }
        if status == 701 || status == 612 { return .redo }
        if status == 579 { return .storedCallbackFailed }
        guard Self.isRetryable(status: status), attempt < maxRetries else { return .fail }
        let hinted = retryAfter.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { Duration.seconds(max(0, $0)) }
        let delay = hinted.map { min($0, maxDelay) } ?? backoff(attempt: attempt, jitter: jitter)
        return .retry(delay: delay, nextHost: status >= 500)
    }

    /// The decision for a transport failure (no response) after `attempt` retries: retried on
    /// the next host unless retries ran out.
    func decideNetworkFailure(attempt: Int, jitter: Double) -> Decision {
        attempt < maxRetries ? .retry(delay: backoff(attempt: attempt, jitter: jitter), nextHost: true) : .fail
    }

    /// `baseDelay × 2^attempt`, scaled by 0.5…1.0 with `jitter` ("equal jitter": never less
    /// than half, so a burst of failed clients spreads out without retrying at once), capped.
    func backoff(attempt: Int, jitter: Double) -> Duration {
        let factor = Double(1 << min(max(attempt, 0), 20)) * (0.5 + 0.5 * min(max(jitter, 0), 1))
        return min(baseDelay * factor, maxDelay)
    }
}
