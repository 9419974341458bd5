extension PostgresConnection {
    /// What every new connection is set up with.
    public struct Settings: Sendable, Hashable {
        /// How long connecting may take before it fails (libpq's `connect_timeout`, whole seconds,
        /// at least 2 as libpq requires). A `connect_timeout` in the connection string wins.
        public var connectTimeout: Duration
        /// The longest a single statement may run before the server cancels it with
        /// ``PostgresError/Code/statementTimeout`` (`statement_timeout`); nil for no limit. This is
        /// what keeps a stuck query from holding a pooled connection and its locks forever.
        public var statementTimeout: Duration?
        /// Shown in `pg_stat_activity.application_name` unless the string sets `application_name`.
        public var applicationName: String

        /// Creates settings; every default is the value a server should start with.
        ///
        /// - Parameters:
        ///   - connectTimeout: 5 seconds.
        ///   - statementTimeout: 30 seconds: longer than any store statement should take.
        ///   - applicationName: `"upgate"`.
        public init(
            connectTimeout: Duration = .seconds(5), statementTimeout: Duration? = .seconds(30),
            applicationName: String = "upgate"
        ) {
            self.connectTimeout = connectTimeout
            self.statementTimeout = statementTimeout
            self.applicationName = applicationName
        }
    }
}
