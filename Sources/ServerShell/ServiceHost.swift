public import Basics
public import HTTPKit
import NativeOS
import Synchronization

/// The one server shell both biz-server and up-server run in: it listens, starts the service's
/// background tasks, waits for signals, drains and stops — in the same order whether the stop
/// comes from a signal (``run(onHangUp:)``) or a caller (``shutdown()``).
///
/// Start: listen (the port is then known, ``boundPort``), start the background tasks in order,
/// log `listening`. Stop: stop accepting connections, let requests in flight finish (the HTTP
/// grace period, then 503), stop the background tasks in reverse order (each waits for a pass
/// in flight), log `stopped`. Requests are drained before the tasks stop because a request in
/// flight may still hand them work (an upload's callback goes to the outbox the retrier drains);
/// once `shutdown()` returns nothing of the service runs.
///
/// The process around it (command line, configuration file, exit codes) is
/// ``main(_:usage:arguments:environment:)``.
public final class ServiceHost: Sendable {
    /// A job that lives as long as the service (up-server's outbox retrier and sweeper).
    public struct BackgroundTask: Sendable {
        /// For logs.
        public var name: String
        let start: @Sendable () -> Void
        let stop: @Sendable () async -> Void

        /// A task started with `start` after the server listens and stopped with `stop` (which
        /// must wait for work in flight) after it has drained.
        public init(name: String, start: @escaping @Sendable () -> Void, stop: @escaping @Sendable () async -> Void) {
            self.name = name
            self.start = start
            self.stop = stop
        }
    }

    private enum Phase {
        case idle
        case running
        case stopping(Task<Void, Never>)
        case stopped
    }

    /// The program name, e.g. `biz-server`.
    public let name: String
    /// The port actually bound once listening, for URLs built before (callback URL, `host`).
    public let boundPort: BoundPort
    private let server: HTTPServer
    private let logger: Logger
    private let tasks: [BackgroundTask]
    private let announce: @Sendable () -> [(key: String, value: Logger.Value)]
    private let phase = Mutex(Phase.idle)
    private let signals = Mutex<SignalObservation?>(nil)

    /// Creates a host; nothing listens until ``start()`` or ``run(onHangUp:)``.
    ///
    /// - Parameters:
    ///   - name: The program name for logs.
    ///   - http: The HTTP server's settings (address, threads, limits).
    ///   - router: The service's routes and middleware.
    ///   - logger: Where the shell's lines (`listening`, `stopped`, signals) and the access log go.
    ///   - observer: Called after each response (metrics).
    ///   - tasks: Background jobs, started in order after listening, stopped in reverse order.
    ///   - boundPort: Where the bound port is published (routes built before the host may hold it).
    ///   - announce: Extra fields of the `listening` line (the callback URL, the base URL),
    ///     computed once the port is bound.
    public init(
        name: String, http: HTTPServer.Configuration, router: Router, logger: Logger,
        observer: HTTPServer.Observer? = nil, tasks: [BackgroundTask] = [], boundPort: BoundPort = BoundPort(),
        announce: @escaping @Sendable () -> [(key: String, value: Logger.Value)] = { [] }
    ) {
        self.name = name
        self.boundPort = boundPort
        self.server = HTTPServer(configuration: http, router: router, logger: logger, observer: observer)
        self.logger = logger
        self.tasks = tasks
        self.announce = announce
    }

    /// A host for a service with `configuration`: named after it, listening on its address with
    /// its thread count and connection limits, naming each request's client through its trusted
    /// proxies (``HTTPServer/Configuration/clientAddress``).
    public convenience init<Configuration: ServiceConfiguration>(
        for configuration: Configuration, router: Router, logger: Logger, observer: HTTPServer.Observer? = nil,
        tasks: [BackgroundTask] = [], boundPort: BoundPort = BoundPort(),
        announce: @escaping @Sendable () -> [(key: String, value: Logger.Value)] = { [] }
    ) {
        var http = HTTPServer.Configuration(
            host: configuration.host, port: Int(configuration.port), threadCount: Self.threadCount(configuration.threads)
        ).with(configuration.connections)
        http.clientAddress = configuration.trustedProxies.clientAddressResolver
        self.init(
            name: Configuration.serviceName, http: http, router: router, logger: logger, observer: observer,
            tasks: tasks, boundPort: boundPort, announce: announce)
    }

    /// The routes; setting them serves requests arriving from then on with the new ones (a
    /// configuration reload), while requests in flight finish on the old.
    public var router: Router {
        get { server.router }
        set { server.router = newValue }
    }

    /// `threads` when positive, else one per core: what both servers' `threads: 0` means.
    public static func threadCount(_ threads: Int) -> Int {
        threads > 0 ? threads : HTTPServer.Configuration.coreCount
    }

    /// Whether the host is listening.
    public var isRunning: Bool {
        phase.withLock { if case .running = $0 { true } else { false } }
    }

    /// Listens, starts the background tasks and logs `listening` with `host`, `port` and the
    /// announced fields. Returns the bound port; calling it again returns the same port.
    ///
    /// - Throws: `HTTPServer.StartError` (`cannot listen on 127.0.0.1:8080: address already in use`).
    @discardableResult
    public func start() throws(HTTPServer.StartError) -> Int {
        let fresh = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .running
            return true
        }
        guard fresh else { return boundPort.value ?? 0 }
        let port: Int
        do {
            port = try server.start()
        } catch {
            phase.withLock { $0 = .idle }
            throw error
        }
        boundPort.value = port
        for task in tasks { task.start() }
        logger.log(.info, "listening", ["host": .string(server.configuration.host), "port": .int(Int64(port))], more: announce())
        return port
    }

    /// Starts (if needed) and serves until SIGINT or SIGTERM (or ``shutdown()``), then stops as
    /// `shutdown()` does. SIGHUP calls `onHangUp` (the configuration reload) and keeps serving;
    /// hang-ups are handled one at a time. Signals are watched from before the server listens,
    /// so a stop requested during start-up is graceful too.
    public func run(onHangUp: @escaping @Sendable () async -> Void = {}) async throws(HTTPServer.StartError) {
        let (stream, observation) = ProcessSignals.stream([.interrupt, .terminate, .hangUp])
        signals.withLock { $0 = observation }
        do {
            try start()
        } catch {
            observation.cancel()
            throw error
        }
        for await signal in stream {
            if signal == .hangUp {
                logger.info("signal received, reloading", ["signal": .string(signal.description)])
                await onHangUp()
                continue
            }
            logger.info("signal received, shutting down", ["signal": .string(signal.description)])
            break
        }
        // The observation stays until the stop is over (shutdown cancels it): a second SIGTERM
        // or a SIGHUP while requests drain must not end the process mid-drain.
        await shutdown()
    }

    /// Stops accepting, lets requests in flight finish, stops the background tasks, logs
    /// `stopped`. Idempotent; a second caller waits for the first stop to end. Also ends a
    /// ``run(onHangUp:)`` in progress.
    public func shutdown() async {
        let stop = phase.withLock { phase -> Task<Void, Never>? in
            switch phase {
            case .idle:
                phase = .stopped
                return nil
            case .stopped:
                return nil
            case .stopping(let task):
                return task
            case .running:
                let task = Task { await self.stop() }
                phase = .stopping(task)
                return task
            }
        }
        await stop?.value
        signals.withLock { $0 }?.cancel()
    }

    private func stop() async {
        let unfinished = await server.shutdown()
        for task in tasks.reversed() { await task.stop() }
        phase.withLock { $0 = .stopped }
        logger.info("stopped", ["unfinished": .int(Int64(unfinished))])
    }
}
