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
/// Every request goes through the router's middleware (``MiddlewareStack/standard``: `X-Reqid`,
/// the access log without queries, the error boundary), then `observer`; every response defaults
/// to `Content-Type: application/json`. The server logs nothing else: starting, stopping and
/// signals are its host's (`ServiceHost`).
public final class HTTPServer: Sendable {
    /// Called after each response, e.g. to update metrics. Must be fast and must not throw.
    public typealias Observer = @Sendable (ResponseEvent) -> Void

    /// The settings.
    public let configuration: Configuration
    private let processor: ExchangeProcessor
    private let daemon = Mutex<MicroHTTPDServer?>(nil)

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: Configuration = .init(), router: Router, logger: Logger, observer: Observer? = nil) {
        self.configuration = configuration
        self.processor = ExchangeProcessor(
            router: router, logger: logger, extra: observer.map { [ResponseObserver($0)] } ?? [],
            handlerTimeout: configuration.handlerTimeout, clientAddress: configuration.clientAddress)
    }

    /// The routes. Setting it takes effect for requests whose head arrives afterwards (requests
    /// in flight finish on the routes they started with): how a configuration reload swaps in
    /// routes built from the new configuration.
    public var router: Router {
        get { processor.router }
        set { processor.router = newValue }
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
    public func start() throws(StartError) -> Int {
        try daemon.withLock { current throws(StartError) -> Int in
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
            do throws(MicroHTTPDError) {
                let started = try MicroHTTPDServer(options: options) { exchange in processor.accept(exchange) }
                current = started
                return started.port
            } catch {
                switch error {
                case .startFailed(_, _, let reason):
                    throw StartError(host: configuration.host, port: configuration.port, reason: reason)
                }
            }
        }
    }

    /// Stops accepting connections, lets in-flight requests finish for up to the grace period,
    /// answers any still running with 503, then stops. Idempotent.
    ///
    /// - Returns: How many requests were still running when the grace period ended (0 when
    ///   the server was not running).
    @discardableResult
    public func shutdown() async -> Int {
        guard let server = daemon.withLock({ current -> MicroHTTPDServer? in
            defer { current = nil }
            return current
        }) else { return 0 }
        server.stopAccepting()
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.shutdownGracePeriod
        while server.inFlightCount > 0 && clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let unfinished = server.inFlightCount
        var fallback = Response.error(status: 503, message: "server shutting down")
        fallback.headers.set(name: RequestID.headerName, value: RequestID.generate())
        server.stop(fallback: ResponsePipeline.raw(fallback))
        return unfinished
    }

    /// Why ``start()`` failed: `cannot listen on 127.0.0.1:8080: address already in use`.
    public struct StartError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The configured host.
        public var host: String
        /// The configured port.
        public var port: Int
        /// Why, in words: `address already in use`, `permission denied`, `not an IPv4 address`.
        public var reason: String

        /// Creates the error.
        public init(host: String, port: Int, reason: String) {
            self.host = host
            self.port = port
            self.reason = reason
        }

        /// `cannot listen on <host>:<port>: <reason>`.
        public var description: String { "cannot listen on \(host):\(port): \(reason)" }
    }
}
