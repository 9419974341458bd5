@testable import NativePostgres
import Testing

/// The pool's decisions, driven without a server: connections are Ints, time is passed in.
@Suite struct PostgresPoolStateTests {
    typealias State = PostgresPoolState<Int>
    let start = ContinuousClock.now
    let down = PostgresError(.connection, message: "connection refused")

    func state(max: Int = 2) -> State {
        State(maxConnections: max, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(400))
    }

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    func isConnect(_ decision: State.Acquire) -> Bool {
        if case .connect = decision { true } else { false }
    }

    func isWait(_ decision: State.Acquire) -> Bool {
        if case .wait = decision { true } else { false }
    }

    @Test func connectionsOpenOnDemandUpToTheLimitThenCallersWait() {
        var pool = state(max: 2)
        #expect(isConnect(pool.acquire(waiter: 1, now: at(0), deadline: at(5000))))
        #expect(isConnect(pool.acquire(waiter: 2, now: at(0), deadline: at(5000))))
        #expect(isWait(pool.acquire(waiter: 3, now: at(0), deadline: at(5000))))
        #expect(pool.openCount == 2)
        #expect(pool.waiters == [3])
    }

    @Test func aReturnedConnectionGoesToTheLongestWaiter() {
        var pool = state(max: 1)
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.connected()
        _ = pool.acquire(waiter: 2, now: at(0), deadline: at(5000))
        _ = pool.acquire(waiter: 3, now: at(0), deadline: at(5000))
        let actions = pool.release(10, reusable: true)
        #expect(actions.wake.count == 1)
        #expect(actions.wake.first?.waiter == 2)
        if case .use(let connection)? = actions.wake.first?.wake { #expect(connection == 10) } else { Issue.record("not handed over") }
        #expect(pool.waiters == [3])
        #expect(pool.leased == 1)
    }

    @Test func idleConnectionsAreReusedNewestFirst() {
        var pool = state(max: 2)
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.acquire(waiter: 2, now: at(0), deadline: at(5000))
        _ = pool.connected()
        _ = pool.connected()
        _ = pool.release(10, reusable: true)
        _ = pool.release(11, reusable: true)
        guard case .use(let connection) = pool.acquire(waiter: 3, now: at(0), deadline: at(5000)) else {
            Issue.record("no idle connection used")
            return
        }
        #expect(connection == 11)
    }

    @Test func aBrokenConnectionIsClosedAndItsSlotGoesToAWaiter() {
        var pool = state(max: 1)
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.connected()
        _ = pool.acquire(waiter: 2, now: at(0), deadline: at(5000))
        let actions = pool.release(10, reusable: false)
        #expect(actions.close == [10])
        #expect(actions.wake.map(\.waiter) == [2])
        #expect(pool.openCount == 0)
        #expect(isConnect(pool.acquire(waiter: 2, now: at(0), deadline: at(5000))))
    }

    @Test func afterAFailedConnectTheNextWaitsOutABackoffThatDoublesUpToTheCap() {
        var pool = state(max: 4)
        var now = 0
        var delays: [Int] = []
        for _ in 0..<5 {
            #expect(isConnect(pool.acquire(waiter: 1, now: at(now), deadline: at(60_000))))
            _ = pool.connectFailed(down, now: at(now))
            guard case .retry(let instant) = pool.acquire(waiter: 1, now: at(now), deadline: at(60_000)) else {
                Issue.record("no backoff")
                return
            }
            let delay = instant - at(now)
            delays.append(Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000))
            now += delays.last!
        }
        #expect(delays == [100, 200, 400, 400, 400])
    }

    @Test func aCallerWhoseDeadlineComesBeforeTheNextAttemptFailsAtOnceWithTheConnectError() {
        var pool = state()
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.connectFailed(down, now: at(0))
        guard case .fail(let error) = pool.acquire(waiter: 2, now: at(10), deadline: at(50)) else {
            Issue.record("did not fail fast")
            return
        }
        #expect(error.code == .connection)
        #expect(error.message == "connection refused")
    }

    @Test func whileTheServerIsDownOnlyOneProbeRunsAndItsOutcomeWakesTheOthers() {
        var pool = state(max: 4)
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.connectFailed(down, now: at(0))
        #expect(isConnect(pool.acquire(waiter: 1, now: at(100), deadline: at(5000))))
        #expect(isWait(pool.acquire(waiter: 2, now: at(100), deadline: at(5000))))
        #expect(isWait(pool.acquire(waiter: 3, now: at(100), deadline: at(5000))))
        #expect(pool.connecting == 1)
        let recovered = pool.connected()
        #expect(recovered.wake.map(\.waiter) == [2, 3])
        #expect(pool.lastConnectError == nil)
        #expect(isConnect(pool.acquire(waiter: 2, now: at(110), deadline: at(5000))))
        #expect(isConnect(pool.acquire(waiter: 3, now: at(110), deadline: at(5000))))
    }

    @Test func aWaiterThatTimesOutLeavesTheQueueWithThePoolTimeoutOrTheConnectError() {
        var pool = state(max: 1)
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.connected()
        _ = pool.acquire(waiter: 2, now: at(0), deadline: at(100))
        #expect(pool.timedOut(2, after: .milliseconds(100))?.code == .poolTimeout)
        #expect(pool.waiters.isEmpty)
        #expect(pool.timedOut(2, after: .milliseconds(100)) == nil)
    }

    @Test func closingClosesIdleConnectionsFailsWaitersAndLaterReturns() {
        var pool = state(max: 2)
        _ = pool.acquire(waiter: 1, now: at(0), deadline: at(5000))
        _ = pool.acquire(waiter: 2, now: at(0), deadline: at(5000))
        _ = pool.connected()
        _ = pool.connected()
        _ = pool.release(10, reusable: true)
        _ = pool.acquire(waiter: 3, now: at(0), deadline: at(5000))
        _ = pool.acquire(waiter: 4, now: at(0), deadline: at(5000))
        let closing = pool.close()
        #expect(closing.close == [])
        #expect(closing.wake.map(\.waiter) == [4])
        #expect(pool.release(11, reusable: true).close == [11])
        guard case .fail(let error) = pool.acquire(waiter: 5, now: at(0), deadline: at(5000)) else {
            Issue.record("a closed pool served")
            return
        }
        #expect(error.code == .poolClosed)
    }
}
