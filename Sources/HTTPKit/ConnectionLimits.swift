/// The connection limits a server's configuration file may set (JSON keys `maxConnections`,
/// `headerTimeoutSeconds` and `maxConnectionsPerAddress`); see ``HTTPServer/Configuration/connectionLimit``,
/// ``HTTPServer/Configuration/headerTimeout`` and ``HTTPServer/Configuration/maxConnectionsPerAddress``.
public struct ConnectionLimits: Sendable, Equatable {
    /// Most simultaneous connections (keep `ulimit -n` above it). Default 4096.
    public var maxConnections: Int
    /// Seconds a client may take to send a request head (0: no limit). Default 30.
    public var headerTimeoutSeconds: Int
    /// Most simultaneous connections from one IP address (0: no limit). Default 0.
    public var maxConnectionsPerAddress: Int

    /// Creates limits; see each property for its default.
    public init(maxConnections: Int = 4096, headerTimeoutSeconds: Int = 30, maxConnectionsPerAddress: Int = 0) {
        self.maxConnections = maxConnections
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// A negative value is a configuration mistake, not "no limit".
    public var problem: String? {
        if maxConnections < 1 { return "maxConnections must be 1 or more" }
        if headerTimeoutSeconds < 0 { return "headerTimeoutSeconds must be 0 (no limit) or more" }
        if maxConnectionsPerAddress < 0 { return "maxConnectionsPerAddress must be 0 (no limit) or more" }
        return nil
    }
}

extension HTTPServer.Configuration {
    /// A configuration with `limits` applied.
    public func with(_ limits: ConnectionLimits) -> HTTPServer.Configuration {
        var configuration = self
        configuration.connectionLimit = limits.maxConnections
        configuration.headerTimeout = .seconds(limits.headerTimeoutSeconds)
        configuration.maxConnectionsPerAddress = limits.maxConnectionsPerAddress
        return configuration
    }
}
