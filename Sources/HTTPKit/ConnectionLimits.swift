/// The per-connection limits a server's configuration file may set (JSON keys
/// `headerTimeoutSeconds` and `maxConnectionsPerAddress`); see
/// ``HTTPServer/Configuration/headerTimeout`` and ``HTTPServer/Configuration/maxConnectionsPerAddress``.
public struct ConnectionLimits: Sendable, Equatable {
    /// Seconds a client may take to send a request head (0: no limit). Default 30.
    public var headerTimeoutSeconds: Int
    /// Most simultaneous connections from one IP address (0: no limit). Default 0.
    public var maxConnectionsPerAddress: Int

    /// Creates limits; see each property for its default.
    public init(headerTimeoutSeconds: Int = 30, maxConnectionsPerAddress: Int = 0) {
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// A negative value is a configuration mistake, not "no limit".
    public var problem: String? {
        if headerTimeoutSeconds < 0 { return "headerTimeoutSeconds must be 0 (no limit) or more" }
        if maxConnectionsPerAddress < 0 { return "maxConnectionsPerAddress must be 0 (no limit) or more" }
        return nil
    }
}

extension HTTPServer.Configuration {
    /// A configuration with `limits` applied.
    public func with(_ limits: ConnectionLimits) -> HTTPServer.Configuration {
        var configuration = self
        configuration.headerTimeout = .seconds(limits.headerTimeoutSeconds)
        configuration.maxConnectionsPerAddress = limits.maxConnectionsPerAddress
        return configuration
    }
}
