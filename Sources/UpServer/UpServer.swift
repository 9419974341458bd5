public import Basics
import Foundation
public import HTTPKit
import NativeCrypto
public import ServerShell
import Synchronization
import UpCore

/// A self-hostable Qiniu up server: form upload, v1 resumable (mkblk/bput/mkfile), v2 multipart,
/// PutPolicy enforcement, callbacks with a durable outbox (qiniu-protocol.md §1–§9).
///
/// ```swift
/// let server = try UpServer.open(configuration: configuration, logger: Logger(label: "up-server"))
/// try await server.run()   // until SIGINT/SIGTERM
/// ```
///
/// It runs in the shared shell (`ServiceHost`): the outbox retrier and the sweeper are the
/// host's background tasks, started after the server listens and stopped after it has drained.
/// A reload (SIGHUP) replaces the key pairs and buckets (``UpCredentials``).
public final class UpServer: HostedService {
    /// The registry served at `/metrics`.
    public let metrics: Metrics
    /// The shell that serves the routes.
    public let host: ServiceHost

    let services: UpServices
    /// The keys and buckets in force.
    let credentials: UpCredentials
    /// Redelivers failed callbacks from the outbox (a background task of the host).
    let retrier: OutboxRetrier
    /// Removes expired blocks and uploads (a background task of the host).
    let sweeperTask: SweeperTask
    private let current: Mutex<UpServerConfiguration>

    init(
        configuration: UpServerConfiguration, index: any UpIndex, store: any BlockStore,
        callbacks: any CallbackDelivering, contextSecret: [UInt8], clock: any WallClock, logger: Logger,
        metrics: Metrics, outboxPollInterval: Duration = .seconds(2), credentials: UpCredentials? = nil
    ) {
        self.metrics = metrics
        current = Mutex(configuration)
        let credentials = credentials ?? UpCredentials(keys: configuration.keys, buckets: configuration.buckets)
        self.credentials = credentials
        let upMetrics = UpMetrics(metrics)
        let boundPort = BoundPort()
        let services = UpServices(
            configuration: configuration, index: index, store: store, hashes: BlockHashCache(), locks: BlobWriteLocks(),
            authorizer: UploadAuthorizer(credentials: credentials),
            contextMAC: HMACSHA1(key: contextSecret),
            committer: ObjectCommitter(
                index: index, store: store, callbacks: callbacks, configuration: configuration, metrics: upMetrics,
                logger: logger),
            clock: clock, metrics: upMetrics, logger: logger,
            baseURL: boundPort.baseURL(
                publicBaseURL: configuration.publicBaseURL, host: configuration.host,
                configuredPort: Int(configuration.port)))
        self.services = services
        let retrier = OutboxRetrier(
            index: index, callbacks: callbacks, settings: configuration.callback, metrics: upMetrics, logger: logger,
            clock: clock)
        self.retrier = retrier
        let sweeperTask = SweeperTask(
            sweeper: Sweeper(index: index, store: store, hashes: services.hashes), metrics: upMetrics, logger: logger,
            clock: clock)
        self.sweeperTask = sweeperTask
        let sweepInterval = Duration.seconds(max(configuration.sweepIntervalSeconds, 1))
        let http = HTTPMetrics(metrics, prefix: "upgate_up")
        host = ServiceHost(
            for: configuration, router: Self.routes(services), logger: logger,
            observer: { event in
                http.observe(event)
                upMetrics.observe(event)
            },
            tasks: [
                .init(name: "outbox-retrier", start: { retrier.start(every: outboxPollInterval) }, stop: { await retrier.stop() }),
                .init(name: "sweeper", start: { sweeperTask.start(every: sweepInterval) }, stop: { await sweeperTask.stop() }),
            ],
            boundPort: boundPort, announce: { [("baseUrl", .string(services.baseURL()))] })
    }

    private static func routes(_ services: UpServices) -> Router {
        var router = Router()
        OperationsRoutes(
            check: { services.metrics.outboxDepth.set(Double(try await services.index.outboxDepth())) },
            unavailable: "index unavailable", registry: services.metrics.registry,
            refresh: {
                if let depth = try? await services.index.outboxDepth() { services.metrics.outboxDepth.set(Double(depth)) }
            }
        ).register(on: &router)
        FormUploadController(services: services).register(on: &router)
        ManagementController(services: services).register(on: &router)
        ResumableController(services: services).register(on: &router)
        MultipartController(services: services).register(on: &router)
        return router
    }

    /// The configuration in force (keys and buckets as last reloaded).
    public var configuration: UpServerConfiguration { current.withLock { $0 } }

    /// All routes; usable in-process without a socket.
    public var router: Router { host.router }

    /// The base URL returned as `host` (spec §4.2): `publicBaseURL`, else from the listen address and bound port.
    public var baseURL: String { services.baseURL() }

    /// Starts listening and the background tasks; returns the bound port.
    @discardableResult
    public func start() throws(HTTPServer.StartError) -> Int { try host.start() }

    /// Starts (if needed) and serves until SIGINT/SIGTERM, then shuts down gracefully.
    public func run() async throws(HTTPServer.StartError) { try await host.run() }

    /// Stops accepting, lets in-flight requests finish, then stops the background tasks (the
    /// same order as after a signal).
    public func shutdown() async { await host.shutdown() }

    /// Applies a reloaded configuration: the key pairs (tokens, management and callback
    /// signatures) and the buckets take effect for the next request; every other setting waits
    /// for a restart.
    public func reload(_ configuration: UpServerConfiguration) throws(ConfigurationError) -> ReloadSummary {
        let restart = current.withLock { state -> [String] in
            let restart = state.restartOnlyDifferences(to: configuration)
            state.keys = configuration.keys
            state.buckets = configuration.buckets
            return restart
        }
        let old = credentials.replace(keys: configuration.keys, buckets: configuration.buckets)
        let keys = ReloadSummary.difference(from: old.secrets, to: configuration.keys)
        let buckets = ReloadSummary.difference(
            from: Dictionary(uniqueKeysWithValues: old.buckets.map { ($0, true) }),
            to: Dictionary(configuration.buckets.map { ($0, true) }, uniquingKeysWith: { first, _ in first }))
        return ReloadSummary(
            changes: [
                ("keysAdded", .string(keys.added)), ("keysRemoved", .string(keys.removed)),
                ("keysChanged", .string(keys.changed)),
                ("bucketsAdded", .string(buckets.added)), ("bucketsRemoved", .string(buckets.removed)),
            ],
            needsRestart: restart)
    }
}
