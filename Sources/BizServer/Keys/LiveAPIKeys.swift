import Basics
import Synchronization

/// The stored API keys a running server honours: an in-memory index by hash, kept in step with
/// the ``APIKeyStore`` by ``poll(every:)``.
///
/// Another process (`biz-server keys create|revoke`) may change the store at any time, so the
/// server must notice without a restart (issue 11 §3: within a second). A full reload per request
/// would be a store read on the token path; instead the poller reads the store's version counter
/// every ``pollInterval`` and reloads only when it moved, and requests read the index under a
/// lock held for one dictionary lookup. A revoked key thus stops working, and a created one
/// starts, at most one interval plus one reload after the change committed.
///
/// Reloads may race (the poller, and the admin API reloading after its own write): each reads the
/// version *before* the keys, so the keys are at least as new as the version they are filed
/// under, and an older result never replaces a newer one.
final class LiveAPIKeys: Sendable {
    /// How often the poller reads the version.
    static let pollInterval: Duration = .milliseconds(250)

    /// What a request needs to know about a stored key.
    struct Entry: Sendable, Equatable {
        /// The key's public id (for the access log).
        let id: String
        /// Whose key it is.
        let clientID: String
        /// When it stops working, Unix seconds.
        let expiresAt: Int64?
    }

    private struct State {
        /// The version the index was loaded at; nil before the first load.
        var version: Int64?
        var byHash: [String: Entry] = [:]
        /// Ids seen so far and whether each was revoked, to count changes for the metrics
        /// (`upgate_biz_api_keys_created_total`, `…_revoked_total`: what happened while this server ran).
        var seen: [String: Bool] = [:]
        /// Whether the last poll failed (failures are logged when they start and when they end).
        var failing = false
    }

    private let store: any APIKeyStore
    private let state = Mutex(State())
    private let metrics: BizMetrics
    private let logger: Logger
    /// When this server started (Unix seconds): on the first load, only keys created or revoked
    /// since then are counted as news.
    private let startedAt: Int64

    init(store: any APIKeyStore, clock: any WallClock, metrics: BizMetrics, logger: Logger) {
        self.store = store
        self.metrics = metrics
        self.logger = logger
        startedAt = clock.unixSeconds
    }

    /// The active-or-expired stored key with SHA-256 `hash` (revoked keys are not in the index).
    func lookup(hash: String) -> Entry? {
        state.withLock { $0.byHash[hash] }
    }

    /// Reloads the keys if the store's version moved since the last load (or nothing is loaded).
    ///
    /// - Throws: The store's error; the index is then left as it was.
    func refresh() async throws {
        let version = try await store.version()
        if state.withLock({ $0.version == version }) { return }
        let keys = try await store.keys()
        state.withLock { state in
            if let current = state.version, current > version { return }
            let firstLoad = state.version == nil
            var byHash: [String: Entry] = [:]
            var created = 0
            var revoked = 0
            for key in keys {
                let isRevoked = key.revokedAt != nil
                if firstLoad {
                    if key.createdAt >= startedAt { created += 1 }
                    if let at = key.revokedAt, at >= startedAt { revoked += 1 }
                } else {
                    switch state.seen[key.id] {
                    case nil:
                        created += 1
                        if isRevoked { revoked += 1 }
                    case false? where isRevoked: revoked += 1
                    default: break
                    }
                }
                state.seen[key.id] = isRevoked
                if !isRevoked { byHash[key.keySHA256] = Entry(id: key.id, clientID: key.clientID, expiresAt: key.expiresAt) }
            }
            state.byHash = byHash
            state.version = version
            metrics.apiKeysCreated.increment(by: Double(created))
            metrics.apiKeysRevoked.increment(by: Double(revoked))
        }
    }

    /// Refreshes every ``pollInterval`` until the task is cancelled. A failing store keeps the
    /// last keys (a revoked key then stays honoured until the store answers again; refusing every
    /// stored key instead would turn a store hiccup into an outage), is counted, and is logged
    /// once when it starts failing and once when it recovers.
    func poll(every interval: Duration = LiveAPIKeys.pollInterval) async {
        while !Task.isCancelled {
            do {
                try await refresh()
                metrics.apiKeyPolls.increment(["ok"])
                if state.withLock({ state in defer { state.failing = false }; return state.failing }) {
                    logger.info("API key store answers again")
                }
            } catch {
                metrics.apiKeyPolls.increment(["failed"])
                if !state.withLock({ state in defer { state.failing = true }; return state.failing }) {
                    logger.warning("API key store unreadable; keeping the keys loaded before", ["error": .string("\(error)")])
                }
            }
            try? await Task.sleep(for: interval)
        }
    }
}
