public import Basics
internal import NativeOS
import Synchronization

/// The HTTP server a service starts once and stops once, and the port it bound — the part of
/// `start()` / `run()` / `shutdown()` that biz-server and up-server share.
public final class HTTPServerHost: Sendable {
    /// The port actually bound, for URL closures built before the server started.
    public let boundPort = BoundPort()
    private let server = Mutex<HTTPServer?>(nil)

    /// Creates a host with no server yet.
    public init() {}

    /// Whether ``start(_:router:logger:observer:)`` has run.
    public var isStarted: Bool { server.withLock { $0 != nil } }

    /// Starts an ``HTTPServer`` with `configuration` and remembers it; returns the bound port.
    @discardableResult
    public func start(
        _ configuration: HTTPServer.Configuration, router: Router, logger: Logger,
        observer: HTTPServer.Observer? = nil
    ) throws -> Int {
        let started = HTTPServer(configuration: configuration, router: router, logger: logger, observer: observer)
        let port = try started.start()
        server.withLock { $0 = started }
        boundPort.value = port
        return port
    }

    /// Serves until SIGINT/SIGTERM, then shuts down gracefully (nothing if never started).
    public func run() async throws {
        guard let started = server.withLock({ $0 }) else { return }
        let (signals, observation) = ProcessSignals.stream([.interrupt, .terminate])
        for await _ in signals { break }
        observation.cancel()
        await started.shutdown()
    }

    /// Stops accepting, lets in-flight requests finish, stops (nothing if never started).
    public func shutdown() async {
        guard let started = server.withLock({ $0 }) else { return }
        await started.shutdown()
    }

    /// `threads` when positive, else one per core: what both servers' `threads: 0` means.
    public static func threadCount(_ threads: Int) -> Int {
        threads > 0 ? threads : HTTPServer.Configuration.coreCount
    }
}
