public import Basics
import Foundation
public import HTTPKit
import NativeCrypto
import Synchronization
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

    let services: UpServices
    private let logger: Logger
    private let upMetrics: UpMetrics
    private let http = Mutex<HTTPServer?>(nil)

    init(
        configuration: UpServerConfiguration, index: any UpIndex, store: any BlockStore,
        callbacks: any CallbackDelivering, contextSecret: [UInt8], clock: any WallClock, logger: Logger,
        metrics: Metrics
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        let upMetrics = UpMetrics(metrics)
        self.upMetrics = upMetrics
        var keys: [String: HMACSHA1] = [:]
        for (accessKey, secretKey) in configuration.keys { keys[accessKey] = HMACSHA1(key: Array(secretKey.utf8)) }
        let port = BoundPort()
        let services = UpServices(
            configuration: configuration, index: index, store: store, hashes: BlockHashCache(), locks: BlobWriteLocks(),
            authorizer: UploadAuthorizer(keys: KeyRing(macs: keys), buckets: Set(configuration.buckets)),
            contextMAC: HMACSHA1(key: contextSecret),
            committer: ObjectCommitter(
                index: index, store: store, callbacks: callbacks, configuration: configuration, metrics: upMetrics,
                logger: logger),
            clock: clock, metrics: upMetrics, logger: logger,
            baseURL: Self.baseURLProvider(configuration, port))
        self.services = services
        self.portCell = port
        var router = Router()
        OperationsController(services: services).register(on: &router)
        FormUploadController(services: services).register(on: &router)
        self.router = router
    }

    private let portCell: BoundPort

    /// The base URL returned as `host` (spec §4.2): `publicBaseURL`, else from the listen address and bound port.
    public var baseURL: String { services.baseURL() }

    private static func baseURLProvider(_ configuration: UpServerConfiguration, _ port: BoundPort) -> @Sendable () -> String {
        if let base = configuration.publicBaseURL {
            let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
            return { trimmed }
        }
        let host = ["0.0.0.0", "::", ""].contains(configuration.host) ? "127.0.0.1" : configuration.host
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let fallback = Int(configuration.port)
        return { "http://\(hostPart):\(port.value ?? fallback)" }
    }

    /// Starts listening; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let server = HTTPServer(
            configuration: HTTPServer.Configuration(
                host: configuration.host, port: Int(configuration.port),
                threadCount: configuration.threads > 0 ? configuration.threads : HTTPServer.Configuration.coreCount),
            router: router, logger: logger, observer: { [upMetrics] in upMetrics.observe($0) })
        let port = try server.start()
        http.withLock { $0 = server }
        portCell.value = port
        logger.info("up-server listening", ["host": .string(configuration.host), "port": .int(Int64(port)),
                                            "baseUrl": .string(baseURL)])
        return port
    }

    /// Starts (if needed) and serves until SIGINT/SIGTERM, then shuts down gracefully.
    public func run() async throws {
        if http.withLock({ $0 == nil }) { try start() }
        guard let server = http.withLock({ $0 }) else { return }
        try await server.run()
    }

    /// Stops accepting, lets in-flight requests finish, stops.
    public func shutdown() async {
        guard let server = http.withLock({ $0 }) else { return }
        await server.shutdown()
    }
}
