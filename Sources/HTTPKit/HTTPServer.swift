public import Basics
internal import NativeHTTP
internal import NativeOS
import Synchronization

/// An HTTP/1.1 server: libmicrohttpd underneath, a ``Router`` on top.
///
/// ```swift
/// var router = Router()
/// router.get("/health") { _, _ in .json(raw: Array(#"{"ok":true}"#.utf8)) }
/// let server = HTTPServer(configuration: .init(port: 8080), router: router, logger: log)
/// try server.start()
/// ```
///
/// Every response carries `X-Reqid`, defaults to `Content-Type: application/json`, is written to
/// the access log (path without query: queries may carry tokens) and reported to `observer`.
public final class HTTPServer: Sendable {
    /// Called after each response, e.g. to update metrics. Must be fast and must not throw.
    public typealias Observer = @Sendable (ResponseEvent) -> Void

    /// The settings.
    public let configuration: Configuration
    private let processor: ExchangeProcessor
    private let daemon = Mutex<MicroHTTPDServer?>(nil)
    private let stopped = Mutex(false)

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: Configuration = .init(), router: Router, logger: Logger, observer: Observer? = nil) {
        self.configuration = configuration
        self.processor = ExchangeProcessor(
            router: router, logger: logger, observer: observer, handlerTimeout: configuration.handlerTimeout
        )
    }

    /// The bound port once started, else `nil`.
    public var port: Int? { daemon.withLock { $0?.port } }

    /// Connections cut so far for taking longer than ``Configuration/headerTimeout`` to send a
    /// request head.
    public var headerTimeouts: Int { daemon.withLock { $0?.headerTimeouts ?? 0 } }

    /// Connections cut so far because their client half-closed in the middle of a request body
    /// (it can never complete; the handler's body read fails at once instead of at its timeout).
    public var abandonedBodies: Int { daemon.withLock { $0?.abandonedBodies ?? 0 } }

    /// Starts listening and returns the bound port. Throws ``StartError`` if the address is
    /// unusable (not IPv4, in use). Calling it again returns the same port.
    @discardableResult
    public func start() throws -> Int {
        try daemon.withLock { current in
            if let current { return current.port }
            ProcessSignals.ignoreBrokenPipe()
            let options = MicroHTTPDServer.Options(
                host: configuration.host,
                port: configuration.port,
                threadCount: max(1, configuration.threadCount),
                connectionTimeoutSeconds: Int(max(1, configuration.connectionTimeout.components.seconds)),
                connectionMemoryLimit: configuration.connectionMemoryLimit,
                connectionLimit: configuration.connectionLimit,
                bodyHighWater: configuration.bodyBufferLimit,
                headerTimeoutSeconds: Int(max(0, configuration.headerTimeout.components.seconds)),
                maxConnectionsPerAddress: max(0, configuration.maxConnectionsPerAddress)
            )
            let processor = self.processor
            do {
                let started = try MicroHTTPDServer(options: options) { exchange in processor.accept(exchange) }
                current = started
                processor.logger.info("listening", ["host": .string(configuration.host), "port": .int(Int64(started.port))])
                return started.port
            } catch {
                processor.logger.error("start failed", ["error": .string("\(error)")])
                throw StartError(host: configuration.host, port: configuration.port)
            }
        }
    }

    /// Stops accepting connections, lets in-flight requests finish for up to the grace period,
    /// answers any still running with 503, then stops. Idempotent.
    public func shutdown() async {
        guard let server = daemon.withLock({ current -> MicroHTTPDServer? in
            defer { current = nil }
            return current
        }) else { return }
        server.stopAccepting()
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.shutdownGracePeriod
        while server.inFlightCount > 0 && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let unfinished = server.inFlightCount
        server.stop(fallback: processor.finalize(
            .error(status: 503, message: "server shutting down"), requestID: RequestID.generate()
        ))
        processor.logger.info("stopped", ["unfinished": .int(Int64(unfinished))])
    }

    /// Why ``start()`` failed.
    public struct StartError: Error, Sendable, Equatable {
        /// The configured host.
        public var host: String
        /// The configured port.
        public var port: Int
    }
}
