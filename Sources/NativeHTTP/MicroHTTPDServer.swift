internal import CMicroHTTPD
import Synchronization

/// The libmicrohttpd daemon: owns the `MHD_Daemon *` and turns each request into an
/// ``HTTPExchange`` handed to a Swift closure.
///
/// Mode: internal epoll thread pool (`MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL`) with
/// suspend/resume, so handlers run as Swift tasks and never block a pool thread (DESIGN.md,
/// "Decisions"). Stopping follows the MHD rules: stop accepting, drain, and never call
/// `MHD_stop_daemon` while a connection is suspended.
///
/// `MHD_quiesce_daemon` is deliberately not used: on an epoll daemon with internal threads it
/// races with the worker's own removal of the listening socket from its epoll set (libmicrohttpd
/// 0.9.75, `MHD_epoll`'s "at the connection limit" branch also fires on `was_quiesced`), and the
/// loser aborts the process with "Failed to remove listen FD from epoll set". Draining refuses
/// new connections through the accept-policy callback instead (``onAcceptPolicy``).
public final class MicroHTTPDServer: Sendable {
    /// Daemon settings; every default is chosen here.
    public struct Options: Sendable {
        /// IPv4 address to bind, e.g. `"127.0.0.1"` or `"0.0.0.0"`.
        public var host: String
        /// Port to bind; 0 picks a free one (read it back from ``port``).
        public var port: Int
        /// Worker threads in MHD's pool.
        public var threadCount: Int
        /// Idle seconds before MHD closes a connection that is not suspended.
        public var connectionTimeoutSeconds: Int
        /// Bytes MHD may use per connection for the request head and read buffer; a head that
        /// does not fit is answered with 431 by MHD. Default 32 KiB (why:
        /// `HTTPServer.Configuration.connectionMemoryLimit`).
        public var connectionMemoryLimit: Int
        /// Pending-connection queue length for `listen`.
        public var listenBacklog: Int
        /// Connections served at once, across the pool (each worker takes an equal share).
        /// Past it MHD stops accepting: new connections wait in the listen queue, unanswered,
        /// until one closes. MHD's own default is FD_SETSIZE - 4 (1020) even in epoll mode.
        public var connectionLimit: Int
        /// Unread body bytes at which MHD stops reading from the socket.
        public var bodyHighWater: Int
        /// Bytes still arriving after a response was chosen that are read and dropped before the
        /// connection is closed instead.
        public var discardLimit: Int
        /// Longest time a connection may take to send a request head, counted from accept and
        /// from the end of the previous request (see ``ConnectionWatchdog``); 0 disables the cut.
        public var headerTimeoutSeconds: Int
        /// Most simultaneous connections from one IP address; more are refused at accept. 0: no
        /// limit (behind a reverse proxy every client has the proxy's address).
        public var maxConnectionsPerAddress: Int

        /// Creates options; see each property for its meaning.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            threadCount: Int = 2,
            connectionTimeoutSeconds: Int = 60,
            connectionMemoryLimit: Int = 32 << 10,
            listenBacklog: Int = 1024,
            connectionLimit: Int = 4096,
            bodyHighWater: Int = 256 << 10,
            discardLimit: Int = 8 << 20,
            headerTimeoutSeconds: Int = 30,
            maxConnectionsPerAddress: Int = 0
        ) {
            self.host = host
            self.port = port
            self.threadCount = threadCount
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.connectionMemoryLimit = connectionMemoryLimit
            self.listenBacklog = listenBacklog
            self.connectionLimit = connectionLimit
            self.bodyHighWater = bodyHighWater
            self.discardLimit = discardLimit
            self.headerTimeoutSeconds = headerTimeoutSeconds
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
        }
    }

    /// The port actually bound.
    public let port: Int

    private let daemon: Mutex<DaemonState>
    private let context: DaemonContext

    private struct DaemonState: ~Copyable {
        var pointer: DaemonHandle?
    }

    /// Starts listening. `handler` runs on an MHD worker thread once per request, when the head
    /// is complete; it must return quickly (start a task) and may call
    /// ``HTTPExchange/respond(_:)`` right away to answer without reading the body.
    public init(options: Options, handler: @escaping @Sendable (HTTPExchange) -> Void) throws(MicroHTTPDError) {
        guard (0...65_535).contains(options.port) else {
            throw .startFailed(host: options.host, port: options.port, reason: "the port must be 0…65535")
        }
        let context = DaemonContext(
            handler: handler,
            buffering: BodyBuffering(
                highWater: max(1, options.bodyHighWater),
                lowWater: max(0, options.bodyHighWater / 4),
                gatherLimit: min(128 << 10, max(1, options.bodyHighWater / 2)),
                discardLimit: max(0, options.discardLimit)
            ),
            watchdog: ConnectionWatchdog(limitSeconds: options.headerTimeoutSeconds)
        )
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        let contextPointer = unsafe Unmanaged.passUnretained(context).toOpaque()
        let started = unsafe cmhd_start_daemon(
            flags, options.host, UInt16(options.port),
            onAcceptPolicy, contextPointer,
            onAccess, contextPointer,
            onRequestCompleted, contextPointer,
            onURILogged, contextPointer,
            UInt32(clamping: options.connectionTimeoutSeconds),
            UInt32(clamping: max(1, options.threadCount)),
            max(4096, options.connectionMemoryLimit),
            UInt32(clamping: options.listenBacklog),
            UInt32(clamping: max(1, options.connectionLimit)),
            onConnectionNotified, contextPointer,
            UInt32(clamping: max(0, options.maxConnectionsPerAddress))
        )
        guard let started = unsafe started else {
            throw .startFailed(
                host: options.host, port: options.port, reason: ListenProbe.reason(host: options.host, port: options.port))
        }
        self.context = context
        self.port = Int(unsafe cmhd_bound_port(started))
        self.daemon = Mutex(DaemonState(pointer: unsafe DaemonHandle(pointer: started)))
        context.watchdog.start()
    }

    deinit {
        stop()
    }

    /// Requests whose exchange has started and not yet completed.
    public var inFlightCount: Int { context.exchangeCount }

    /// Connections cut so far for taking longer than ``Options/headerTimeoutSeconds`` to send a
    /// request head.
    public var headerTimeouts: Int { context.watchdog.cutConnections }

    /// Connections cut so far because their client finished sending (half-closed) in the middle
    /// of a request body, which could then never complete (see ``ConnectionWatchdog``).
    public var abandonedBodies: Int { context.watchdog.abandonedBodies }

    /// The exchanges currently in flight (for shutdown: answer the ones still waiting).
    public var inFlightExchanges: [HTTPExchange] { context.exchanges }

    /// Stops accepting new connections (each is closed as soon as it is accepted); requests
    /// already in flight continue, and responses from now on carry `Connection: close` so
    /// keep-alive clients go away.
    public func stopAccepting() {
        context.beginDraining()
    }

    /// Stops the daemon. Exchanges still waiting for a response are answered with `fallback` first
    /// and their connections resumed (MHD forbids stopping with suspended connections); then open
    /// connections are closed. Blocks for at most about a second while suspended connections
    /// resume. Idempotent.
    public func stop(fallback: RawResponse = RawResponse(status: 503)) {
        for exchange in context.beginStopping(fallback: fallback) {
            exchange.respond(fallback)
            exchange.abortStream()
        }
        var waitedMilliseconds = 0
        while context.exchanges.contains(where: { $0.isSuspended }) && waitedMilliseconds < 1000 {
            context.sleepMilliseconds(5)
            waitedMilliseconds += 5
        }
        context.watchdog.stop()
        daemon.withLock { state in
            guard let handle = state.pointer else { return }
            unsafe MHD_stop_daemon(handle.pointer)
            state.pointer = nil
        }
    }
}

/// Why the daemon could not start.
public enum MicroHTTPDError: Error, Sendable, Equatable {
    /// MHD refused to listen on `host:port`; `reason` says why in words ("address already in
    /// use", "not an IPv4 address").
    case startFailed(host: String, port: Int, reason: String)
}

/// `struct MHD_Daemon *`; MHD's daemon API is thread-safe and the handle lives in a `Mutex`.
@safe struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
