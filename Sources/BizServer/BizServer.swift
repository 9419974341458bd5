public import Basics
public import HTTPKit
public import HTTPTransport
import NativeCrypto
public import ServerShell
import NativePostgres
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
/// the upload page `GET /` with `GET /upgate.js`,
/// the admin API `GET|POST /v1/admin/keys`, `DELETE /v1/admin/keys/:id`, and the webhook admin
/// endpoints under `/v1/admin/webhooks/`. Each newly recorded upload is announced to the
/// configured `webhooks` (Standard Webhooks, durable deliveries sent by a background loop).
/// It runs in the shared shell (`ServiceHost`): the stored API keys are loaded before it listens
/// and followed by a background poller; a reload (SIGHUP) rebuilds the routes from the new
/// configuration (clients, keys, up hosts, limits, jwt, admin token) and swaps them in.
public final class BizServer: HostedService {
    /// The stores, clock and metrics every version of the routes shares.
    private struct Parts: Sendable {
        let store: any UploadRecordStore
        /// Where created API keys live (nil: only the configured keys, no admin creation).
        let keys: (any APIKeyStore)?
        /// The stored API keys this server honours, followed by a poller while it runs.
        let liveKeys: LiveAPIKeys?
        let clock: any WallClock
        let metrics: BizMetrics
        let boundPort: BoundPort
        let logger: Logger
        /// Sends the webhook deliveries the store holds, on the background loop.
        let webhooks: WebhookDispatcher
        /// Makes the per-client and per-end-user limiters (in-process, or shared in PostgreSQL).
        let rateLimits: RateLimitFactory
        /// Readies the stores before the server listens (migrates PostgreSQL).
        let prepareStores: @Sendable () async throws -> Void
    }

    /// The registry served at `/metrics`.
    public let metrics: Metrics
    /// The shell that serves the routes.
    public let host: ServiceHost

    private let parts: Parts
    /// The configuration in force and its rate limiter (kept across reloads that keep the rate).
    private let current: Mutex<(configuration: BizServerConfiguration, limiter: any RateLimitState)>

    /// Builds the server; nothing listens until ``start()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - store: Where upload records go (SQLite in production, in-memory in tests).
    ///   - keys: Where API keys created by `biz-server keys create` or the admin API live; without
    ///     one only the configured keys work and the admin API cannot create any.
    ///   - clock: Wall clock for token deadlines, rate limits and replay windows.
    ///   - logger: Receives JSON-lines logs; never given a secret.
    ///   - webhookTransport: The HTTP client webhooks are sent with (default: libcurl).
    ///   - rateLimits: Where the token buckets live: in this process (nil, the default), or shared by every
    ///     instance (`PostgresBizDatabase.rateLimits`).
    ///   - prepareStores: Run by ``prepare()`` before the server listens (e.g. migrations).
    ///   - storeMaintenance: Run every minute while the server runs, with the clock's time (e.g.
    ///     pruning full token buckets from PostgreSQL); failures are only logged.
    public init(
        configuration: BizServerConfiguration,
        store: any UploadRecordStore,
        keys: (any APIKeyStore)? = nil,
        clock: any WallClock = SystemClock(),
        logger: Logger,
        metrics: Metrics = Metrics(),
        webhookTransport: (any HTTPTransport)? = nil,
        rateLimits: RateLimitFactory? = nil,
        prepareStores: @escaping @Sendable () async throws -> Void = {},
        storeMaintenance: (@Sendable (_ now: Double) async throws -> Void)? = nil
    ) {
        self.metrics = metrics
        let bizMetrics = BizMetrics(metrics)
        let liveKeys = keys.map { LiveAPIKeys(store: $0, clock: clock, metrics: bizMetrics, logger: logger) }
        let webhooks = WebhookDispatcher(
            store: store.webhookDeliveries, endpoints: configuration.webhooks,
            transport: webhookTransport ?? (try? CurlTransport(configuration: .init(maxConnectionsPerHost: 4))),
            clock: clock, metrics: bizMetrics, logger: logger)
        let parts = Parts(
            store: store, keys: keys, liveKeys: liveKeys, clock: clock, metrics: bizMetrics, boundPort: BoundPort(),
            logger: logger, webhooks: webhooks, rateLimits: rateLimits ?? RateLimiter.inProcess,
            prepareStores: prepareStores)
        self.parts = parts
        let limiter = parts.rateLimits(Self.clientScope, configuration.rateLimit)
        current = Mutex((configuration, limiter))
        let http = HTTPMetrics(metrics, prefix: "upgate_biz")
        var tasks: [ServiceHost.BackgroundTask] = []
        if let liveKeys { tasks.append(.running("api-key-poller") { await liveKeys.poll() }) }
        tasks.append(.running("webhook-deliveries") { await webhooks.run() })
        if let storeMaintenance {
            tasks.append(.running("store-maintenance") {
                while (try? await Task.sleep(for: .seconds(60))) != nil {
                    do {
                        try await storeMaintenance(clock.now())
                    } catch {
                        logger.warning("store maintenance failed", ["error": .string("\(error)")])
                    }
                }
            })
        }
        host = ServiceHost(
            for: configuration, router: Self.routes(configuration, limiter: limiter, parts: parts), logger: logger,
            observer: { http.observe($0) }, tasks: tasks, boundPort: parts.boundPort,
            announce: { [parts] in
                [("callbackUrl", .string(Self.callbackURL(configuration, parts.boundPort)))]
            })
    }

    /// The rate-limit scope of API clients (end users: ``EndUserAuthenticator/scope(client:)``).
    static let clientScope = "client"

    /// Opens the production stores and builds the server: the PostgreSQL database when
    /// `database` is set (migrated by ``prepare()``), else `uploads.sqlite3` and the API key store
    /// in the data directory.
    public static func open(configuration: BizServerConfiguration, logger: Logger) throws -> BizServer {
        if let connectionString = try configuration.databaseConnectionString() {
            let database = PostgresBizDatabase(connectionString)
            logger.info("store", ["database": .string(connectionString.description)])
            return BizServer(
                configuration: configuration, store: database.records, keys: database.keys, logger: logger,
                rateLimits: database.rateLimits, prepareStores: { try await database.migrate() },
                storeMaintenance: { try await database.pruneRateBuckets(now: $0) })
        }
        let store = try SQLiteUploadRecordStore(
            path: configuration.dataDirectory + "/uploads.sqlite3", durableWrites: configuration.durableWrites)
        let keys = try SQLiteAPIKeyStore(directory: configuration.dataDirectory, durableWrites: configuration.durableWrites)
        return BizServer(configuration: configuration, store: store, keys: keys, logger: logger)
    }

    /// Loads the stored API keys before the server listens, so a stored key works from the first
    /// request on (the poller follows changes afterwards).
    public func prepare() async throws {
        try await parts.prepareStores()
        try await refreshKeys()
    }

    /// Loads the stored API keys now if they changed (``run()`` does this before listening; the
    /// poller started with the server does it every 250 ms).
    public func refreshKeys() async throws {
        try await parts.liveKeys?.refresh()
    }

    /// The configuration in force (the last one reloaded).
    public var configuration: BizServerConfiguration { current.withLock { $0.configuration } }

    /// All routes; usable in-process without a socket (`router.respond(to:logger:)`).
    public var router: Router { host.router }

    /// The callback URL put into tokens: `publicBaseURL` when configured, else derived from the
    /// listen address and the port actually bound (so `--port 0` and `--port N` both work).
    public var callbackURL: String { Self.callbackURL(configuration, parts.boundPort) }

    private static func callbackURL(_ configuration: BizServerConfiguration, _ port: BoundPort) -> String {
        port.baseURL(publicBaseURL: configuration.publicBaseURL, host: configuration.host,
                     configuredPort: Int(configuration.port))() + "/v1/callback"
    }

    /// The routes for `configuration`: rebuilt on every reload, over the same store and metrics.
    private static func routes(_ configuration: BizServerConfiguration, limiter: any RateLimitState, parts: Parts) -> Router {
        let mac = HMACSHA1(key: Array(configuration.secretKey.utf8))
        let clients = ClientDirectory(configuration.clients, stored: parts.liveKeys, clock: parts.clock)
        let boundPort = parts.boundPort
        let callbackURLs = CallbackURLCache(port: boundPort) { callbackURL(configuration, boundPort) }
        var router = Router()
        TokenController(
            clients: clients, limiter: limiter,
            issuer: TokenIssuer(accessKey: configuration.accessKey, mac: mac, upHosts: configuration.upHosts),
            clock: parts.clock, metrics: parts.metrics, callbackURL: callbackURLs.current,
            endUsers: configuration.jwt.flatMap {
                EndUserAuthenticator(
                    $0, clients: configuration.clients, serverRate: configuration.rateLimit, store: parts.store,
                    clock: parts.clock, logger: parts.logger, metrics: parts.metrics, rateLimits: parts.rateLimits)
            },
            addresses: configuration.access.addressRateLimit.map(AddressLimiter.init)
        ).register(on: &router)
        CallbackController(
            authenticator: CallbackAuthenticator(
                verifier: CallbackVerifier(keys: KeyRing(macs: [configuration.accessKey: mac])),
                replay: configuration.replay),
            store: parts.store, clock: parts.clock, metrics: parts.metrics,
            webhooks: { [webhooks = parts.webhooks] in webhooks.messages(for: $0) }
        ).register(on: &router)
        UploadsController(clients: clients, store: parts.store, metrics: parts.metrics).register(on: &router)
        WebPageController().register(on: &router)
        let store = parts.store
        let metrics = parts.metrics
        OperationsRoutes(
            check: {
                do {
                    // An indexed point lookup: proves the store answers without scanning it.
                    _ = try await store.upload(id: "healthz")
                } catch {
                    metrics.storeErrors.increment()
                    throw error
                }
            },
            unavailable: "store unavailable", registry: metrics.registry
        ).register(on: &router)
        let gate = AdminGate(access: configuration.access, clock: parts.clock, metrics: parts.metrics)
        AdminWebhooksController(gate: gate, dispatcher: parts.webhooks, endpoints: configuration.webhooks)
            .register(on: &router)
        AdminKeysController(
            gate: gate,
            manager: APIKeyManager(store: parts.keys, clients: configuration.clients), live: parts.liveKeys,
            clock: parts.clock
        ).register(on: &router)
        // A web app on another origin asks for tokens and manages keys (issue 11 §3).
        router.use(CORSMiddleware(configuration.cors, paths: ["/v1/uptoken", "/v1/admin/*"]))
        return router
    }

    /// Starts listening; returns the bound port.
    @discardableResult
    public func start() throws(HTTPServer.StartError) -> Int { try host.start() }

    /// Loads the stored keys, starts (if needed) and serves until SIGINT/SIGTERM, then shuts down
    /// gracefully.
    public func run() async throws {
        if !host.isRunning { try await refreshKeys() }
        try await host.run()
    }

    /// Stops accepting, lets in-flight requests finish, stops.
    public func shutdown() async { await host.shutdown() }

    /// Applies a reloaded configuration: clients, keys, up hosts, public URL, rate limit and
    /// replay window take effect for the next request; the rest waits for a restart.
    public func reload(_ configuration: BizServerConfiguration) throws(ConfigurationError) -> ReloadSummary {
        let (old, router) = current.withLock { state -> (BizServerConfiguration, Router) in
            let old = state.configuration
            if configuration.rateLimit != old.rateLimit {
                state.limiter = parts.rateLimits(Self.clientScope, configuration.rateLimit)
            }
            state.configuration = configuration
            parts.webhooks.endpoints.replace(with: configuration.webhooks)
            return (old, Self.routes(configuration, limiter: state.limiter, parts: parts))
        }
        host.router = router
        let clients = ReloadSummary.difference(
            from: Dictionary(old.clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            to: Dictionary(configuration.clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }))
        return ReloadSummary(
            changes: [
                ("clientsAdded", .string(clients.added)), ("clientsRemoved", .string(clients.removed)),
                ("clientsChanged", .string(clients.changed)),
                ("accessKey", .string(old.accessKey == configuration.accessKey ? "unchanged" : "changed")),
                ("secretKey", .string(old.secretKey == configuration.secretKey ? "unchanged" : "changed")),
                ("adminToken", .string(
                    old.access.adminTokenSHA256 == configuration.access.adminTokenSHA256 ? "unchanged" : "changed")),
            ],
            needsRestart: old.restartOnlyDifferences(to: configuration))
    }
}
