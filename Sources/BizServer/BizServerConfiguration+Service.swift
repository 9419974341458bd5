public import ServerShell

extension BizServerConfiguration: ServiceConfiguration {
    /// `biz-server`.
    public static let serviceName = "biz-server"
    /// `Config/biz-server.json`.
    public static let defaultPath = "Config/biz-server.json"

    /// The development AK/SK, the development API key (`dev-api-key`, by its SHA-256), and no
    /// API client at all: each gets a warning line at start-up and after a reload.
    public var warnings: [StartupWarning] {
        var warnings: [StartupWarning] = []
        if DevelopmentCredentials.isDevelopment(accessKey: accessKey, secretKey: secretKey) {
            warnings.append(.developmentKeys)
        }
        for client in clients where client.apiKeySHA256 == DevelopmentCredentials.apiKeySHA256 {
            warnings.append(StartupWarning("development API key in use", [
                "client": client.id,
                "detail": "this client's API key is the published development one; set UPGATE_API_KEYS in production",
            ]))
        }
        if clients.isEmpty {
            warnings.append(StartupWarning("no API client configured", [
                "detail": "every POST /v1/uptoken is refused (401) until the configuration lists clients",
            ]))
        }
        return warnings + webhookWarnings
    }

    /// The settings a reload cannot change in a running server (the listener, the stores and
    /// the thread pool are built once): their names where `other` differs.
    func restartOnlyDifferences(to other: BizServerConfiguration) -> [String] {
        var names: [String] = []
        if durableWrites != other.durableWrites { names.append("durableWrites") }
        if database != other.database { names.append("database") }
        if threads != other.threads { names.append("threads") }
        if connections != other.connections { names.append("maxConnections/headerTimeoutSeconds/maxConnectionsPerAddress") }
        // Who the client is is decided by the listener, built once (`HTTPServer.Configuration.clientAddress`).
        if access.trustedProxies != other.access.trustedProxies { names.append("trustedProxies") }
        return names
    }
}
