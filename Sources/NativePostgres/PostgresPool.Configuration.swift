extension PostgresPool {
    /// A pool's limits, and what each of its connections is set up with.
    public struct Configuration: Sendable, Hashable {
        /// The most connections open at once; callers beyond wait. Each is a server process, so the
        /// sum over all instances must stay under the server's `max_connections` (100 by default).
        public var maxConnections: Int
        /// How long a caller waits for a connection (in line behind others, or for the server to
        /// come back) before failing with ``PostgresError/Code/poolTimeout`` or the connect error.
        public var acquireTimeout: Duration
        /// The wait before retrying after a failed connect; doubled per consecutive failure.
        public var initialBackoff: Duration
        /// The longest wait between connect attempts while the server stays down.
        public var maxBackoff: Duration
        /// Timeouts and name for each connection.
        public var connection: PostgresConnection.Settings

        /// Creates a configuration; every default is the value a server should start with.
        ///
        /// - Parameters:
        ///   - maxConnections: 8: a few per core keeps a 2–4 core server busy while others wait on the network.
        ///   - acquireTimeout: 5 seconds: long enough to ride out a server restart (well under a
        ///     second here), short enough for a client's request to get its 503.
        ///   - initialBackoff: 100 ms.
        ///   - maxBackoff: 2 seconds.
        ///   - connection: ``PostgresConnection/Settings/init(connectTimeout:statementTimeout:applicationName:)``'s defaults.
        public init(
            maxConnections: Int = 8, acquireTimeout: Duration = .seconds(5), initialBackoff: Duration = .milliseconds(100),
            maxBackoff: Duration = .seconds(2), connection: PostgresConnection.Settings = PostgresConnection.Settings()
        ) {
            self.maxConnections = maxConnections
            self.acquireTimeout = acquireTimeout
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.connection = connection
        }
    }
}
