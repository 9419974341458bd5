#if os(Linux)  // NativeCurl is a Linux-only dependency (Package.swift)
extension CurlTransport {
    /// Connection pool and stall detection; every default is set in the initializer.
    public struct Configuration: Sendable {
        /// Connections open at once to one host:port; further requests wait for one to free up
        /// (their `timeout` keeps running). 0 means no limit. Default 16: the client's parallel
        /// block uploads plus headroom.
        public var maxConnectionsPerHost: Int
        /// Connections open at once in total; 0 means no limit. Default 0.
        public var maxTotalConnections: Int
        /// Idle keep-alive connections kept for reuse (the pool size). Default 32.
        public var maxIdleConnections: Int
        /// Fail with ``TransportError/Kind/timeout`` when fewer than this many bytes per second
        /// move for ``lowSpeedTime``; 0 turns the check off. Waiting for the server's reply moves
        /// no bytes, so ``lowSpeedTime`` must exceed the slowest expected handler. Default 0 (off).
        public var lowSpeedLimit: Int
        /// The window for ``lowSpeedLimit`` (whole seconds, at least 1). Default 30 s.
        public var lowSpeedTime: Duration

        /// Creates a configuration; see each property for its meaning and default.
        public init(
            maxConnectionsPerHost: Int = 16,
            maxTotalConnections: Int = 0,
            maxIdleConnections: Int = 32,
            lowSpeedLimit: Int = 0,
            lowSpeedTime: Duration = .seconds(30)
        ) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxTotalConnections = maxTotalConnections
            self.maxIdleConnections = maxIdleConnections
            self.lowSpeedLimit = lowSpeedLimit
            self.lowSpeedTime = lowSpeedTime
        }
    }
}
#endif
