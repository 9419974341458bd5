internal import Foundation

extension HTTPServer {
    /// Server settings; every default is set in the initializer.
    public struct Configuration: Sendable {
        /// IPv4 address to bind. Default `"127.0.0.1"` (never every interface by accident).
        public var host: String
        /// Port to bind. Default 0: the system picks one, read it from ``HTTPServer/port``.
        public var port: Int
        /// MHD worker threads. Default: one per core.
        public var threadCount: Int
        /// Idle time before a connection that is not waiting on a handler is closed. Default 60 s.
        public var connectionTimeout: Duration
        /// Connections served at once. Past it new connections wait in the listen queue,
        /// unanswered, until one closes (an idle keep-alive one after ``connectionTimeout``).
        /// Default 4096; libmicrohttpd's own default, 1020, left a 500-upload wave plus its
        /// callbacks and a load generator close to it. Keep `ulimit -n` above it.
        public var connectionLimit: Int
        /// Memory per connection for the request head and read buffer. A head that does not fit
        /// is answered 431 by libmicrohttpd, with its own HTML page (at the default, one header
        /// of 31,000 bytes passes and one of 33,000 does not; nginx refuses a header line over
        /// 8 KiB by default).
        ///
        /// Default 32 KiB, for two reasons: it is the most glibc's `malloc` hands out from its
        /// heap, while a larger pool is a fresh `mmap` per connection, whose pages the kernel
        /// faults in and zeroes; and libmicrohttpd zeroes the whole pool again for every request
        /// on a kept-alive connection (4.5 % of biz-server's CPU at 64 KiB under wrk). Not
        /// 16 KiB: a ~15 KB query string (schemathesis, seed 1796289620) fit the read buffer but
        /// left no room to parse its arguments, so the connection closed without an answer.
        public var connectionMemoryLimit: Int
        /// Time a handler (including reading a collected body) may take before the client gets
        /// 503 `{"error":"handler timed out"}`. Routes may override it. Default 30 s.
        public var handlerTimeout: Duration
        /// How long ``HTTPServer/shutdown()`` lets in-flight requests finish before answering the
        /// rest with 503. Default 10 s.
        public var shutdownGracePeriod: Duration
        /// Unread streamed-body bytes at which the server stops reading from the socket. Default 256 KiB.
        public var bodyBufferLimit: Int
        /// Longest time a client may take to send a request head — from connecting, and from the
        /// end of its previous request on a kept-alive connection — before the connection is cut
        /// (the slow-loris defence; libmicrohttpd's own timeout only counts idleness). Zero
        /// disables it. Default 30 s.
        public var headerTimeout: Duration
        /// Most simultaneous connections from one IP address; more are refused as they connect.
        /// Default 0: no limit — right behind a reverse proxy, where every client has the proxy's
        /// address; set it when clients connect directly.
        public var maxConnectionsPerAddress: Int
        /// Finds the client's address from the socket's peer address and the request headers
        /// (behind trusted proxies, from `X-Forwarded-For`); what handlers, rate limits and the
        /// access log see as ``Request/remoteAddress``. Default nil: the peer address.
        public var clientAddress: (@Sendable (_ peer: String, _ headers: HTTPHeaders) -> String)? = nil

        /// The number of active processor cores (the default thread count).
        public static var coreCount: Int { ProcessInfo.processInfo.activeProcessorCount }

        /// Creates a configuration; see each property for its meaning and default.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            threadCount: Int = Configuration.coreCount,
            connectionTimeout: Duration = .seconds(60),
            connectionLimit: Int = 4096,
            connectionMemoryLimit: Int = 32 << 10,
            handlerTimeout: Duration = .seconds(30),
            shutdownGracePeriod: Duration = .seconds(10),
            bodyBufferLimit: Int = 256 << 10,
            headerTimeout: Duration = .seconds(30),
            maxConnectionsPerAddress: Int = 0
        ) {
            self.host = host
            self.port = port
            self.threadCount = threadCount
            self.connectionTimeout = connectionTimeout
            self.connectionLimit = connectionLimit
            self.connectionMemoryLimit = connectionMemoryLimit
            self.handlerTimeout = handlerTimeout
            self.shutdownGracePeriod = shutdownGracePeriod
            self.bodyBufferLimit = bodyBufferLimit
            self.headerTimeout = headerTimeout
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
        }
    }
}
