public import Basics
import Foundation
public import HTTPKit
import NativeCrypto
import Outbox
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
/// A reload (SIGHUP) rebuilds the routes (``UpRoutes``) with the new key pairs and buckets over
/// the same stores, and the callback deliverer signs with the new keys (``UpCredentials``).
public final class UpServer: HostedService {
    /// The metrics registry served at `/metrics`.
    public let metrics: Metrics
    /// The shell that serves the routes.
    public let host: ServiceHost

    /// Redelivers failed callbacks from the outbox (a background task of the host).
    let retrier: OutboxRetrier
    /// Removes expired blocks and uploads (a background task of the host).
    let sweeperTask: SweeperTask
    /// The writer of each v1 block being written (tests watch a takeover through it).
    let writers = BlobWriteLocks()
    /// The stores the server runs on (tests look into them).
    let stores: UpStores
    /// The keys and buckets in force, shared with the callback deliverer.
    let credentials: UpCredentials
    /// The externally reachable base URL (`host` in mkblk/bput replies, spec §4.2).
    private let baseURLProvider: @Sendable () -> String
    /// Builds the routes for a configuration (the stores, outbox and caches stay the same).
    private let routes: @Sendable (UpServerConfiguration) -> Router
    private let current: Mutex<UpServerConfiguration>

    /// Wires the server over `stores`; every controller gets only the roles it uses.
    init(
        configuration: UpServerConfiguration, stores: UpStores, callbacks: any CallbackDelivering,
        contextSecret: [UInt8], clock: any WallClock, logger: Logger, metrics: Metrics,
        outboxPollInterval: Duration = .seconds(2), credentials: UpCredentials? = nil
    ) {
        self.metrics = metrics
        self.stores = stores
        current = Mutex(configuration)
        self.credentials = credentials ?? UpCredentials(keys: configuration.keys, buckets: configuration.buckets)
        let upMetrics = UpMetrics(metrics)
        let boundPort = BoundPort()
        let baseURLProvider = boundPort.baseURL(
            publicBaseURL: configuration.publicBaseURL, host: configuration.host, configuredPort: Int(configuration.port))
        self.baseURLProvider = baseURLProvider
        let outbox = CallbackOutbox(
            store: stores.outbox, deliverer: callbacks, settings: configuration.callback,
            owner: OutboxWorker.makeOwnerID(prefix: "up"), clock: clock, metrics: upMetrics, logger: logger)
        let hashes = BlockHashCache()
        let retrier = OutboxRetrier(outbox: outbox)
        self.retrier = retrier
        let sweeperTask = SweeperTask(
            sweeper: Sweeper(
                index: stores.sweep, store: stores.blobs, hashes: hashes,
                orphanGraceSeconds: configuration.orphanGraceSeconds),
            metrics: upMetrics, logger: logger, clock: clock)
        self.sweeperTask = sweeperTask
        let writers = self.writers
        let contexts = BlockContexts(
            mac: HMACSHA1(key: contextSecret), lifetimeSeconds: configuration.contextLifetimeSeconds,
            baseURL: baseURLProvider)
        routes = { configuration in
            UpRoutes(
                configuration: configuration, stores: stores, outbox: outbox, sweeper: sweeperTask, hashes: hashes,
                writers: writers, contexts: contexts, clock: clock, metrics: upMetrics, logger: logger
            ).router()
        }
        let sweepInterval = Duration.seconds(max(configuration.sweepIntervalSeconds, 1))
        let http = HTTPMetrics(metrics, prefix: "upgate_up")
        host = ServiceHost(
            for: configuration, router: routes(configuration), logger: logger,
            observer: { event in
                http.observe(event)
                upMetrics.observe(event)
            },
            tasks: [
                .init(name: "outbox-retrier", start: { retrier.start(every: outboxPollInterval) }, stop: { await retrier.stop() }),
                .init(name: "sweeper", start: { sweeperTask.start(every: sweepInterval) }, stop: { await sweeperTask.stop() }),
            ],
            boundPort: boundPort,
            announce: { [("baseUrl", .string(baseURLProvider()))] })
    }

    /// The configuration in force (keys and buckets as last reloaded).
    public var configuration: UpServerConfiguration { current.withLock { $0 } }

    /// All routes; usable in-process without a socket.
    public var router: Router { host.router }

    /// The base URL returned as `host` (spec §4.2): `publicBaseURL`, else from the listen address and bound port.
    public var baseURL: String { baseURLProvider() }

    /// Starts listening and the background tasks; returns the bound port.
    @discardableResult
    public func start() throws(HTTPServer.StartError) -> Int { try host.start() }

    /// Starts (if needed) and serves until SIGINT/SIGTERM, then shuts down gracefully.
    public func run() async throws(HTTPServer.StartError) { try await host.run() }

    /// Stops accepting, lets in-flight requests finish, then stops the background tasks (the
    /// same order as after a signal).
    public func shutdown() async { await host.shutdown() }

    /// Applies a reloaded configuration: the key pairs (tokens, management and callback
    /// signatures), the buckets, the public buckets and `cors` take effect for the next request; every other setting waits
    /// for a restart.
    public func reload(_ configuration: UpServerConfiguration) throws(ConfigurationError) -> ReloadSummary {
        let (restart, applied) = current.withLock { state -> ([String], UpServerConfiguration) in
            let restart = state.restartOnlyDifferences(to: configuration)
            state.keys = configuration.keys
            state.buckets = configuration.buckets
            state.cors = configuration.cors
            state.publicBuckets = configuration.publicBuckets
            return (restart, state)
        }
        let old = credentials.replace(keys: configuration.keys, buckets: configuration.buckets)
        host.router = routes(applied)
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
