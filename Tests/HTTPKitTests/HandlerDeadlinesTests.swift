@testable import HTTPKit
import Synchronization
import Testing

/// The table (and its timers) behind every async handler's deadline: each armed deadline expires once, not
/// before its time, and never once its request ended.
@Suite struct HandlerDeadlinesTests {
    /// Records when each expiry ran.
    final class Expiries: Sendable {
        private let calls = Mutex<[(id: Int, at: ContinuousClock.Instant)]>([])
        func record(_ id: Int) { calls.withLock { $0.append((id, .now)) } }
        /// When each expired; a second expiry of one deadline fails the test.
        var fired: [Int: ContinuousClock.Instant] {
            let calls = calls.withLock { $0 }
            let once = Dictionary(calls.map { ($0.id, $0.at) }, uniquingKeysWith: { first, _ in first })
            #expect(once.count == calls.count, "a deadline expired twice: \(calls.map(\.id).sorted())")
            return once
        }
        /// Waits up to `limit` for `count` expiries.
        func wait(for count: Int, limit: Duration = .seconds(5)) async throws {
            let end = ContinuousClock.now + limit
            while fired.count < count && ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    @Test func aDeadlineExpiresOnceAfterItsTimeout() async throws {
        let deadlines = HandlerDeadlines()
        let expiries = Expiries()
        let armed = ContinuousClock.now
        deadlines.arm(deadlines.reserve(), after: .milliseconds(50)) { expiries.record(0) }
        try await expiries.wait(for: 1)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try #require(expiries.fired[0]) - armed >= .milliseconds(50))
        #expect(deadlines.count == 0)
    }

    /// Ended after it was armed, or before (the handler's task may end before its deadline is
    /// armed: a fast handler on the other core).
    @Test(arguments: [false, true])
    func anEndedDeadlineNeverExpires(endedBeforeArming: Bool) async throws {
        let deadlines = HandlerDeadlines()
        let expiries = Expiries()
        let ticket = deadlines.reserve()
        if endedBeforeArming { deadlines.end(ticket) }
        deadlines.arm(ticket, after: .milliseconds(20)) { expiries.record(0) }
        if !endedBeforeArming { deadlines.end(ticket) }
        #expect(deadlines.count == 0)
        try await Task.sleep(for: .milliseconds(150))
        #expect(expiries.fired.isEmpty)
    }

    /// A route with a short timeout after one with a long timeout: the timer must not sleep on
    /// until the long one.
    @Test func anEarlierDeadlineIsNotHeldBehindALaterOne() async throws {
        let deadlines = HandlerDeadlines()
        let expiries = Expiries()
        let long = deadlines.reserve()
        deadlines.arm(long, after: .seconds(30)) { expiries.record(1) }
        let armed = ContinuousClock.now
        deadlines.arm(deadlines.reserve(), after: .milliseconds(50)) { expiries.record(0) }
        try await expiries.wait(for: 1, limit: .seconds(3))
        let fired = expiries.fired
        #expect(fired.keys.sorted() == [0])
        #expect(try #require(fired[0]) - armed < .seconds(2))
        #expect(deadlines.count == 1)
        deadlines.end(long)
        #expect(deadlines.count == 0)
    }

    /// Many requests at once, most ending in time: exactly the others expire, each once and none
    /// early, the earliest first after the timer re-arms for them one by one.
    @Test func amongManyOnlyTheUnendedExpireAndNoneEarly() async throws {
        let deadlines = HandlerDeadlines()
        let expiries = Expiries()
        var armedAt: [Int: (ContinuousClock.Instant, Duration)] = [:]
        var tickets: [Int: HandlerDeadlines.Ticket] = [:]
        for id in 0..<200 {
            let timeout = Duration.milliseconds(20 + (id * 37) % 180)
            let ticket = deadlines.reserve()
            armedAt[id] = (.now, timeout)
            deadlines.arm(ticket, after: timeout) { expiries.record(id) }
            tickets[id] = ticket
        }
        for id in 0..<200 where id % 4 != 0 { deadlines.end(tickets[id]!) }
        try await expiries.wait(for: 50)
        try await Task.sleep(for: .milliseconds(100))
        let fired = expiries.fired
        #expect(fired.keys.sorted() == Array(stride(from: 0, to: 200, by: 4)))
        for (id, time) in fired {
            let (armed, timeout) = armedAt[id]!
            #expect(time - armed >= timeout, "deadline \(id) expired early")
        }
        #expect(deadlines.count == 0)
    }
}
