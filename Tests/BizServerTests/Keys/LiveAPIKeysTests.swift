import Basics
@testable import BizServer
import TestSupport
import Testing

/// A store that counts what it is asked, to show the poller reloads only when the version moved.
actor CountingKeyStore: APIKeyStore {
    let inner = InMemoryAPIKeyStore()
    var versionReads = 0
    var keyReads = 0

    func insert(_ key: StoredAPIKey) async throws { try await inner.insert(key) }
    func keys() async throws -> [StoredAPIKey] {
        keyReads += 1
        return try await inner.keys()
    }
    func revoke(id: String, at time: Int64) async throws -> StoredAPIKey? { try await inner.revoke(id: id, at: time) }
    func version() async throws -> Int64 {
        versionReads += 1
        return try await inner.version()
    }
}

struct StoreDown: Error {}

@Suite struct LiveAPIKeysTests {
    static func make(_ store: any APIKeyStore) -> (LiveAPIKeys, Metrics, LogSink) {
        let metrics = Metrics()
        let logs = LogSink.memory()
        return (LiveAPIKeys(
            store: store, clock: ManualClock(1_900_000_000), metrics: BizMetrics(metrics), logger: Logger(label: "t", sink: logs)), metrics, logs)
    }

    @Test func followsInsertsAndRevocationsAndReloadsOnlyWhenTheVersionMoved() async throws {
        let store = CountingKeyStore()
        let (live, metrics, _) = Self.make(store)
        let key = storedKey("key_1", expiresAt: 99)
        try await store.insert(key)
        try await live.refresh()
        #expect(live.lookup(hash: key.keySHA256) == .init(id: "key_1", clientID: "demo", expiresAt: 99))
        try await live.refresh()
        try await live.refresh()
        #expect(await store.versionReads == 3)
        #expect(await store.keyReads == 1)  // the version did not move: no reload
        _ = try await store.revoke(id: "key_1", at: 5)
        try await live.refresh()
        #expect(live.lookup(hash: key.keySHA256) == nil)
        #expect(await store.keyReads == 2)
        // What the first load finds from before the server started is no news; later changes are.
        #expect(metrics.value("upgate_biz_api_keys_created_total") == 0)
        #expect(metrics.value("upgate_biz_api_keys_revoked_total") == 1)
        try await store.insert(storedKey("key_2"))
        try await store.insert(storedKey("key_3"))
        _ = try await store.revoke(id: "key_3", at: 6)  // created and revoked between two looks
        try await live.refresh()
        #expect(metrics.value("upgate_biz_api_keys_created_total") == 2)
        #expect(metrics.value("upgate_biz_api_keys_revoked_total") == 2)
        #expect(live.lookup(hash: storedKey("key_2").keySHA256)?.id == "key_2")
        #expect(live.lookup(hash: storedKey("key_3").keySHA256) == nil)
    }

    @Test func aFailingStoreKeepsTheKeysAndIsLoggedOnceWhenItStartsAndOnceWhenItEnds() async throws {
        let store = InMemoryAPIKeyStore()
        let (live, metrics, logs) = Self.make(store)
        try await store.insert(storedKey("key_1"))
        try await live.refresh()
        await store.fail(with: StoreDown())
        let poller = Task { await live.poll(every: .milliseconds(5)) }
        try await waitUntil { metrics.value("upgate_biz_api_key_polls_total", ["failed"]) >= 5 }
        #expect(live.lookup(hash: storedKey("key_1").keySHA256)?.id == "key_1")
        await store.fail(with: nil)
        try await waitUntil { logs.capturedLines.contains { $0.contains("API key store answers again") } }
        poller.cancel()
        #expect(logs.capturedLines.filter { $0.contains("API key store unreadable") }.count == 1)
        #expect(logs.capturedLines.filter { $0.contains("answers again") }.count == 1)
    }

    @Test func thePollerNoticesAChangeWithinItsInterval() async throws {
        let store = InMemoryAPIKeyStore()
        let (live, _, _) = Self.make(store)
        let poller = Task { await live.poll() }
        defer { poller.cancel() }
        try await live.refresh()
        try await store.insert(storedKey("key_late"))
        let started = ContinuousClock.now
        try await waitUntil(timeout: .seconds(1)) { live.lookup(hash: storedKey("key_late").keySHA256) != nil }
        #expect(ContinuousClock.now - started < .seconds(1))
    }
}

/// Polls `condition` every 10 ms until it holds; fails after `timeout`.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("condition not met within \(timeout)")
    throw StoreDown()
}
