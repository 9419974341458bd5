import Testing
@testable import UpClient

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(100), maxDelay: .seconds(5))

    static let table: [(status: Int, expected: String)] = [
        (200, "success"), (204, "success"), (400, "fail"), (401, "fail"), (403, "fail"), (404, "fail"), (406, "fail"),
        (408, "retry-same"), (413, "fail"), (429, "retry-same"), (500, "retry-next"), (502, "retry-next"),
        (503, "retry-next"), (504, "retry-next"), (599, "retry-next"), (501, "fail"), (573, "fail"), (579, "stored"),
        (612, "redo"), (614, "fail"), (631, "fail"), (701, "redo"),
    ]

    @Test(arguments: table)
    func classification(_ row: (status: Int, expected: String)) {
        let decision = policy.decide(status: row.status, attempt: 0, retryAfter: nil, jitter: 1)
        let name = switch decision {
        case .success: "success"
        case .fail: "fail"
        case .redo: "redo"
        case .storedCallbackFailed: "stored"
        case .retry(_, let next): next ? "retry-next" : "retry-same"
        }
        #expect(name == row.expected, "status \(row.status)")
    }

    @Test func backoffDoublesWithJitterAndIsCapped() {
        #expect(policy.backoff(attempt: 0, jitter: 1) == .milliseconds(100))
        #expect(policy.backoff(attempt: 2, jitter: 1) == .milliseconds(400))
        #expect(policy.backoff(attempt: 2, jitter: 0) == .milliseconds(200))
        #expect(policy.backoff(attempt: 10, jitter: 1) == .seconds(5))
    }

    @Test func retryAfterIsHonouredAndRetriesRunOut() {
        #expect(policy.decide(status: 429, attempt: 0, retryAfter: "2", jitter: 0) == .retry(delay: .seconds(2), nextHost: false))
        #expect(policy.decide(status: 503, attempt: 1, retryAfter: "60", jitter: 0) == .retry(delay: .seconds(5), nextHost: true))
        #expect(policy.decide(status: 503, attempt: 3, retryAfter: nil, jitter: 0) == .fail)
        #expect(policy.decideNetworkFailure(attempt: 0, jitter: 1) == .retry(delay: .milliseconds(100), nextHost: true))
        #expect(policy.decideNetworkFailure(attempt: 3, jitter: 1) == .fail)
    }
}
