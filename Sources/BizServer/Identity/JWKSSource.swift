import Basics
import HTTPTransport
import Synchronization

/// Where the JWKS keys come from: fixed (a `jwksFile`, loaded with the configuration) or a
/// `jwksURL`, fetched with the project's HTTP client and cached, refreshed as `JWKSRefresh` decides.
final class JWKSSource: Sendable {
    private struct State {
        var keys: [VerificationKey]
        var refresh = JWKSRefresh()
        var fetch: Task<Void, Never>?
    }

    private let url: String?
    private let state: Mutex<State>
    private let transport: (any HTTPTransport)?
    private let clock: any WallClock
    private let logger: Logger
    private let metrics: BizMetrics

    /// Longest JWKS response accepted: real ones are a few KiB.
    static let maxResponseBytes = 256 << 10

    /// Keys that never change (a `jwksFile`, or none when only `hs256Secret` is configured).
    init(fixed keys: [VerificationKey], clock: any WallClock, logger: Logger, metrics: BizMetrics) {
        url = nil
        state = Mutex(State(keys: keys))
        transport = nil
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
    }

    /// Keys fetched from `url` on first need; `transport` defaults to a `CurlTransport`.
    init(url: String, transport: (any HTTPTransport)?, clock: any WallClock, logger: Logger, metrics: BizMetrics) {
        self.url = url
        state = Mutex(State(keys: []))
        // Creating a CurlTransport fails only if libcurl cannot start; then every fetch fails and
        // says so, rather than the server refusing to start over an optional feature.
        self.transport = transport ?? (try? CurlTransport(configuration: .init(maxConnectionsPerHost: 2)))
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
    }

    /// The key that must have signed `jwt`: chosen from the current set, after at most one
    /// awaited fetch when the set may be missing it (see `JWKSRefresh`).
    func key(for jwt: CompactJWT, secret: VerificationKey?) async throws(JWTRefusal) -> VerificationKey {
        for _ in 0..<2 {
            let now = clock.now()
            let (selection, decision, pending, hasKeys) = state.withLock { state in
                let selection = Self.select(jwt, state.keys, secret)
                guard url != nil else { return (selection, JWKSRefresh.Decision.useKeys, nil as Task<Void, Never>?, true) }
                let needsFetch: Bool
                switch selection {
                case .success: needsFetch = false
                case .failure(let refusal):
                    needsFetch = refusal.reason == .unknownKeyID
                        || (!state.refresh.hasKeys && refusal.reason != .unsupportedAlgorithm)
                }
                let decision = state.refresh.decide(needsFetch: needsFetch, now: now)
                if decision == .fetchAndWait || decision == .fetchInBackground { state.fetch = Task { await self.fetch() } }
                return (selection, decision, state.fetch, state.refresh.hasKeys)
            }
            switch decision {
            case .useKeys, .fetchInBackground:
                return try Self.answer(selection, hasKeys: hasKeys)
            case .fetchAndWait, .waitForFetch:
                await pending?.value
            }
        }
        let final = state.withLock { state in (Self.select(jwt, state.keys, secret), state.refresh.hasKeys) }
        return try Self.answer(final.0, hasKeys: final.1)
    }

    private static func select(
        _ jwt: CompactJWT, _ keys: [VerificationKey], _ secret: VerificationKey?
    ) -> Result<VerificationKey, JWTRefusal> {
        Result { () throws(JWTRefusal) in try JWTVerifier.key(for: jwt, keys: keys, secret: secret) }
    }

    /// A selection's outcome, except that without any key set a refusal is the server's problem.
    private static func answer(
        _ selection: Result<VerificationKey, JWTRefusal>, hasKeys: Bool
    ) throws(JWTRefusal) -> VerificationKey {
        switch selection {
        case .success(let key): return key
        case .failure(let refusal) where !hasKeys && refusal.reason != .unsupportedAlgorithm:
            throw JWTRefusal(.keysUnavailable, "no JWKS fetched yet")
        case .failure(let refusal): throw refusal
        }
    }

    /// One fetch of the set; keeps the old keys unless a usable new set arrived.
    private func fetch() async {
        let outcome = await download()
        let now = clock.now()
        let count = state.withLock { state in
            if case .success(let set) = outcome { state.keys = set.keys }
            state.refresh.finished(succeeded: (try? outcome.get()) != nil, now: now)
            state.fetch = nil
            return state.keys.count
        }
        switch outcome {
        case .success(let set):
            metrics.jwksFetches.increment(["ok"])
            let kids = set.keys.map { $0.keyID ?? "-" }.joined(separator: ",")
            logger.info("JWKS fetched", ["url": .string(url ?? ""), "keys": .int(Int64(set.keys.count)), "kids": .string(kids)])
            for note in set.notes { logger.warning("JWKS key ignored", ["url": .string(url ?? ""), "reason": .string(note)]) }
        case .failure(let failure):
            metrics.jwksFetches.increment(["failed"])
            logger.warning("JWKS fetch failed; keeping the keys there are", [
                "url": .string(url ?? ""), "error": .string(failure.description), "keptKeys": .int(Int64(count)),
            ])
        }
    }

    private struct FetchFailure: Error, CustomStringConvertible {
        let description: String
    }

    private func download() async -> Result<JWKSet, FetchFailure> {
        guard let url, let transport else { return .failure(FetchFailure(description: "no HTTP client")) }
        let response: TransportResponse
        do {
            response = try await transport.send(TransportRequest(
                method: "GET", url: url, headers: [("Accept", "application/json")], timeout: .seconds(10),
                connectTimeout: .seconds(5), maxResponseBytes: Self.maxResponseBytes))
        } catch {
            return .failure(FetchFailure(description: "\(error)"))
        }
        // Redirects are not followed (CurlTransport): a 3xx is a failure like any non-200.
        guard response.status == 200 else { return .failure(FetchFailure(description: "HTTP \(response.status)")) }
        do {
            let set = try JWKSet.parse(response.body)
            guard !set.keys.isEmpty else {
                return .failure(FetchFailure(description: "no usable key" + set.notes.map { "; \($0)" }.joined()))
            }
            return .success(set)
        } catch {
            return .failure(FetchFailure(description: "not a JWKS: \(error)"))
        }
    }
}
