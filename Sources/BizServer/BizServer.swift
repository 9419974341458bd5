public import Basics
public import HTTPKit
import NativeCrypto
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
/// `POST /v1/callback`, `GET /v1/uploads`, `GET /v1/uploads/:id`, `GET /healthz`, `GET /metrics`.
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

    /// Builds the server; nothing listens until ``start()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - store: Where upload records go (SQLite in production, in-memory in tests).
    ///   - clock: Wall clock for token deadlines, rate limits and replay windows.
    ///   - logger: Receives JSON-lines logs; never given a secret.
    public init(
        configuration: BizServerConfiguration,
        store: any UploadRecordStore,
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
        let clients = ClientDirectory(configuration.clients)
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
            }
        ).register(on: &router)
        CallbackController(
            authenticator: CallbackAuthenticator(
                verifier: CallbackVerifier(keys: KeyRing(macs: [configuration.accessKey: mac])),
                replay: configuration.replay),
            store: store, clock: clock, metrics: bizMetrics
        ).register(on: &router)
        UploadsController(clients: clients, store: store, metrics: bizMetrics).register(on: &router)
        OperationsController(store: store, metrics: bizMetrics).register(on: &router)
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

    /// Starts listening; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let port = try http.start(
            HTTPServer.Configuration(
                host: configuration.host, port: Int(configuration.port),
                threadCount: HTTPServerHost.threadCount(configuration.threads)
            ).with(configuration.connections),
            router: router, logger: logger, observer: { [bizMetrics] in bizMetrics.observe($0) })
        logger.info("biz-server listening", ["host": .string(configuration.host), "port": .int(Int64(port)),
                                             "callbackUrl": .string(callbackURL)])
        return port
    }

    /// Starts (if needed) and serves until SIGINT/SIGTERM, then shuts down gracefully.
    public func run() async throws {
        if !http.isStarted { try start() }
        try await http.run()
    }

    /// Stops accepting, lets in-flight requests finish, stops.
    public func shutdown() async {
        await http.shutdown()
    }
}
