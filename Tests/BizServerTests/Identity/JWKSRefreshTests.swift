@testable import BizServer
import Testing

/// When a fetched JWKS is fetched again: the pure decision, time passed in.
@Suite("JWKS refresh")
struct JWKSRefreshTests {
    @Test func theFirstNeedFetchesAndWaits() {
        var refresh = JWKSRefresh()
        #expect(!refresh.hasKeys)
        #expect(refresh.decide(needsFetch: true, now: 100) == .fetchAndWait)
        #expect(refresh.inFlight)
        // Others arriving meanwhile wait for that fetch instead of starting their own.
        #expect(refresh.decide(needsFetch: true, now: 100.5) == .waitForFetch)
        #expect(refresh.decide(needsFetch: false, now: 100.5) == .useKeys)
        refresh.finished(succeeded: true, now: 101)
        #expect(refresh.hasKeys && !refresh.inFlight)
    }

    @Test func anUnknownKidRefetchesAtMostOnceAMinute() {
        var refresh = JWKSRefresh()
        _ = refresh.decide(needsFetch: true, now: 1000)
        refresh.finished(succeeded: true, now: 1001)
        #expect(refresh.decide(needsFetch: true, now: 1059.9) == .useKeys)
        #expect(refresh.decide(needsFetch: true, now: 1060) == .fetchAndWait)
        refresh.finished(succeeded: false, now: 1061)
        // A failure counts as an attempt too, and keeps the set there was.
        #expect(refresh.hasKeys)
        #expect(refresh.decide(needsFetch: true, now: 1100) == .useKeys)
        #expect(refresh.decide(needsFetch: true, now: 1120) == .fetchAndWait)
    }

    @Test func anOldSetIsRefreshedInTheBackground() {
        var refresh = JWKSRefresh()
        _ = refresh.decide(needsFetch: true, now: 0)
        refresh.finished(succeeded: true, now: 0)
        #expect(refresh.decide(needsFetch: false, now: 3599) == .useKeys)
        #expect(refresh.decide(needsFetch: false, now: 3600) == .fetchInBackground)
        #expect(refresh.decide(needsFetch: false, now: 3601) == .useKeys)
        refresh.finished(succeeded: false, now: 3602)
        #expect(refresh.decide(needsFetch: false, now: 3630) == .useKeys, "a failed refresh waits a minute")
        #expect(refresh.decide(needsFetch: false, now: 3660) == .fetchInBackground)
    }

    @Test func aClockSteppingBackDoesNotLockFetchingOut() {
        var refresh = JWKSRefresh()
        _ = refresh.decide(needsFetch: true, now: 10_000)
        refresh.finished(succeeded: false, now: 10_000)
        #expect(refresh.decide(needsFetch: true, now: 5_000) == .fetchAndWait)
    }
}
