public import Basics
public import HTTPKit
import NativeCrypto
import Synchronization
import UpCore

/// The app's backend piece of the upload chain: issues UpTokens to authenticated API clients and
/// records the signed callbacks the up server sends when an upload has landed.
///
/// ```swift
/// let store = try SQLiteUploadRecordStore(path: "data/biz/uploads.sqlite3")
/// let server = BizServer(configuration: configuration, store: store, logger: Logger(label: "biz-server"))
/// try await server.run()   // until SIGINT/SIGTERM, then drains in-flight requests
/// ```
///
/// Endpoints (documented in `Config/openapi/biz-server.json`): `POST /v1/uptoken`,
/// `POST /v1/callback`, `GET /v1/uploads`, `GET /v1/uploads/:id`, `GET /healthz`, `GET /metrics`,
/// and the admin API `GET|POST /v1/admin/keys`, `DELETE /v1/admin/keys/:id`.
public final class BizServer: Sendable {
    /// The configuration the server was built with.
    public let configuration: BizServerConfiguration
    /// The metrics registry served at `/metrics`.
    public let metrics: Metrics
    /// All routes; usable in-process without a socket (`router.respond(to:logger:)`).
    public let router: Router

    private let logger: Logger
    private let bizMetrics: BizMetrics
    private let http = HTTPServerHost()
    /// The stored API keys this server honours, followed by a poller while it runs.
    private let liveKeys: LiveAPIKeys?
    private let keyPoller = Mutex<Task<Void, Never>?>(nil)

    /// Builds the server; nothing listens until ``start()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - store: Where upload records go (SQLite in production, in-memory in tests).
    ///   - keys: Where API keys created by `biz-server keys create` or the admin API live; without
    ///     one only the configured keys work and the admin API cannot create any.
    ///   - clock: Wall clock for token deadlines, rate limits and replay windows.
    ///   - logger: Receives JSON-lines logs; never given a secret.
    public init(
        configuration: BizServerConfiguration,
        store: any UploadRecordStore,
        keys: (any APIKeyStore)? = nil,
        clock: any WallClock = SystemClock(),
        logger: Logger,
        metrics: Metrics = Metrics()
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        let bizMetrics = BizMetrics(metrics)
        self.bizMetrics = bizMetrics
        let mac = HMACSHA1(key: Array(configuration.secretKey.utf8))
        let liveKeys = keys.map { LiveAPIKeys(store: $0, clock: clock, metrics: bizMetrics, logger: logger) }
        self.liveKeys = liveKeys
        let clients = ClientDirectory(configuration.clients, stored: liveKeys, clock: clock)
        let callbackURL = Self.callbackURLProvider(configuration, http.boundPort)

        var router = Router()
        TokenController(
            clients: clients, limiter: RateLimiter(configuration.rateLimit),
            issuer: TokenIssuer(accessKey: configuration.accessKey, mac: mac, upHosts: configuration.upHosts),
            clock: clock, metrics: bizMetrics, callbackURL: callbackURL,
            endUsers: configuration.jwt.flatMap {
                EndUserAuthenticator(
                    $0, clients: configuration.clients, serverRate: configuration.rateLimit, store: store, clock: clock,
                    logger: logger, metrics: bizMetrics)
            },
            addresses: configuration.access.addressRateLimit.map(AddressLimiter.init)
        ).register(on: &router)
        CallbackController(
            authenticator: CallbackAuthenticator(
                verifier: CallbackVerifier(keys: KeyRing(macs: [configuration.accessKey: mac])),
                replay: configuration.replay),
            store: store, clock: clock, metrics: bizMetrics
        ).register(on: &router)
        UploadsController(clients: clients, store: store, metrics: bizMetrics).register(on: &router)
        OperationsController(store: store, metrics: bizMetrics).register(on: &router)
        AdminKeysController(
            gate: AdminGate(access: configuration.access, clock: clock, metrics: bizMetrics),
            manager: APIKeyManager(store: keys, clients: configuration.clients), live: liveKeys, clock: clock
        ).register(on: &router)
        self.router = router
    }

    /// The callback URL put into tokens: `publicBaseURL` when configured, else derived from the
    /// listen address and the port actually bound (so `--port 0` and `--port N` both work).
    public var callbackURL: String { Self.callbackURLProvider(configuration, http.boundPort)() }

    private static func callbackURLProvider(
        _ configuration: BizServerConfiguration, _ boundPort: BoundPort
    ) -> @Sendable () -> String {
        let base = boundPort.baseURL(
            publicBaseURL: configuration.publicBaseURL, host: configuration.host, configuredPort: Int(configuration.port))
        return { base() + "/v1/callback" }
    }

    /// Loads the stored API keys now if they changed (``run()`` does this before listening; the
    /// poller started by ``start()`` does it every 250 ms).
    public func refreshKeys() async throws {
        try await liveKeys?.refresh()
    }

    /// Starts listening, and following the key store; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        var settings = HTTPServer.Configuration(
            host: configuration.host, port: Int(configuration.port),
            threadCount: HTTPServerHost.threadCount(configuration.threads)
        ).with(configuration.connections)
        let proxies = configuration.access.trustedProxies
        if !proxies.isEmpty {
            settings.clientAddress = { peer, headers in
                proxies.clientAddress(peer: peer, forwardedFor: headers.values(for: "X-Forwarded-For"))
            }
        }
        let port = try http.start(
            settings, router: router, logger: logger, observer: { [bizMetrics] in bizMetrics.observe($0) })
        if let liveKeys {
            keyPoller.withLock { task in
                if task == nil { task = Task { await liveKeys.poll() } }
            }
        }
        logger.info("biz-server listening", ["host": .string(configuration.host), "port": .int(Int64(port)),
                                             "callbackUrl": .string(callbackURL)])
        return port
    }

    /// Starts (if needed) and serves until SIGINT/SIGTERM, then shuts down gracefully.
    public func run() async throws {
        if !http.isStarted {
            try await refreshKeys()  // a stored key works from the first request on
            try start()
        }
        try await http.run()
    }

    /// Stops accepting, lets in-flight requests finish, stops.
    public func shutdown() async {
        keyPoller.withLock { $0?.cancel() }
        await http.shutdown()
    }
}
