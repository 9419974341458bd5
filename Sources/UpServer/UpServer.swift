public import Basics
import Foundation
public import HTTPKit
import NativeCrypto
import Outbox
import UpCore

/// A self-hostable Qiniu up server: form upload, v1 resumable (mkblk/bput/mkfile), v2 multipart,
/// PutPolicy enforcement, callbacks with a durable outbox (qiniu-protocol.md §1–§9).
///
/// ```swift
/// let server = try UpServer.open(configuration: configuration, logger: Logger(label: "up-server"))
/// try await server.run()   // until SIGINT/SIGTERM
/// ```
public final class UpServer: Sendable {
    /// The configuration the server was built with.
    public let configuration: UpServerConfiguration
    /// The metrics registry served at `/metrics`.
    public let metrics: Metrics
    /// All routes; usable in-process without a socket.
    public let router: Router

    private let logger: Logger
    private let upMetrics: UpMetrics
    private let http: HTTPServerHost
    /// Redelivers failed callbacks from the outbox (started by `start()`).
    let retrier: OutboxRetrier
    /// Removes expired blocks and uploads (started by `start()`).
    let sweeperTask: SweeperTask
    private let outboxPollInterval: Duration
    /// The externally reachable base URL (`host` in mkblk/bput replies, spec §4.2).
    private let baseURLProvider: @Sendable () -> String
    /// The writer of each v1 block being written (tests watch a takeover through it).
    let writers = BlobWriteLocks()
    /// The stores the server runs on (tests look into them).
    let stores: UpStores

    /// Wires the server over `stores`; every controller gets only the roles it uses.
    init(
        configuration: UpServerConfiguration, stores: UpStores, callbacks: any CallbackDelivering,
        contextSecret: [UInt8], clock: any WallClock, logger: Logger, metrics: Metrics,
        outboxPollInterval: Duration = .seconds(2)
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        self.stores = stores
        let upMetrics = UpMetrics(metrics)
        self.upMetrics = upMetrics
        let http = HTTPServerHost()
        self.http = http
        baseURLProvider = Self.baseURLProvider(configuration, http.boundPort)
        self.outboxPollInterval = outboxPollInterval
        let outbox = CallbackOutbox(
            store: stores.outbox, deliverer: callbacks, settings: configuration.callback,
            owner: OutboxWorker.makeOwnerID(prefix: "up"), clock: clock, metrics: upMetrics, logger: logger)
        let hashes = BlockHashCache()
        retrier = OutboxRetrier(outbox: outbox)
        sweeperTask = SweeperTask(
            sweeper: Sweeper(index: stores.sweep, store: stores.blobs, hashes: hashes), metrics: upMetrics,
            logger: logger, clock: clock)
        router = UpRoutes(
            configuration: configuration, stores: stores, outbox: outbox, hashes: hashes, writers: writers,
            contexts: BlockContexts(
                mac: HMACSHA1(key: contextSecret), lifetimeSeconds: configuration.contextLifetimeSeconds,
                baseURL: baseURLProvider),
            clock: clock, metrics: upMetrics, logger: logger
        ).router()
    }

    /// The base URL returned as `host` (spec §4.2): `publicBaseURL`, else from the listen address and bound port.
    public var baseURL: String { baseURLProvider() }

    private static func baseURLProvider(_ configuration: UpServerConfiguration, _ port: BoundPort) -> @Sendable () -> String {
        port.baseURL(publicBaseURL: configuration.publicBaseURL, host: configuration.host, configuredPort: Int(configuration.port))
    }

    /// Starts listening; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let port = try http.start(
            HTTPServer.Configuration(
                host: configuration.host, port: Int(configuration.port),
                threadCount: HTTPServerHost.threadCount(configuration.threads)
            ).with(configuration.connections),
            router: router, logger: logger, observer: { [upMetrics] in upMetrics.observe($0) })
        retrier.start(every: outboxPollInterval)
        sweeperTask.start(every: .seconds(max(configuration.sweepIntervalSeconds, 1)))
        logger.info("up-server listening", ["host": .string(configuration.host), "port": .int(Int64(port)),
                                            "baseUrl": .string(baseURL)])
        return port
    }

    /// Starts (if needed) and serves until SIGINT/SIGTERM, then shuts down gracefully.
    public func run() async throws {
        if !http.isStarted { try start() }
        try await http.run()
        await stopBackgroundTasks()
    }

    /// Stops accepting, lets in-flight requests finish, stops.
    public func shutdown() async {
        await stopBackgroundTasks()
        await http.shutdown()
    }

    /// Stops the outbox retrier and the sweeper, waiting for a pass in flight.
    private func stopBackgroundTasks() async {
        await retrier.stop()
        await sweeperTask.stop()
    }
}
