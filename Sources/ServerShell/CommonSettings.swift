public import Basics
public import HTTPKit

/// The configuration keys every server has, read once here for both:
///
/// | key | default |
/// |---|---|
/// | `host` | `"127.0.0.1"` |
/// | `port` | the server's (biz-server 8080, up-server 9000) |
/// | `dataDirectory` | the server's (`data/biz`, `data/up`), relative to the working directory |
/// | `publicBaseURL` | none: `http://<host>:<bound port>` |
/// | `threads` | `0` (= one HTTP worker thread per core) |
/// | `maxConnections`, `headerTimeoutSeconds`, `maxConnectionsPerAddress` | `4096`, `30`, `0` (no limit): ``ConnectionLimits`` |
/// | `cors` | `{"allowedOrigins": []}` (off): the web origins allowed to call the server from a browser, ``CORSPolicy`` |
/// | `trustedProxies` | `[]`: `X-Forwarded-For` is ignored. CIDR blocks whose peers may name the client, ``TrustedProxies`` |
public struct CommonSettings: Sendable {
    /// `host`.
    public var host: String
    /// `port`.
    public var port: UInt16
    /// `dataDirectory`.
    public var dataDirectory: String
    /// `publicBaseURL`.
    public var publicBaseURL: String?
    /// `threads`.
    public var threads: Int
    /// `maxConnections`, `headerTimeoutSeconds`, `maxConnectionsPerAddress`.
    public var connections: ConnectionLimits
    /// `cors.allowedOrigins`.
    public var cors: CORSPolicy = .off
    /// `trustedProxies`.
    public var trustedProxies: TrustedProxies = .none

    /// Reads the common keys of `file`, with the server's own defaults for the port and the
    /// data directory.
    public static func read(
        _ file: ConfigurationObject, defaultPort: UInt16, defaultDataDirectory: String
    ) throws(ConfigurationError) -> CommonSettings {
        var settings = CommonSettings(
            host: try file.string("host") ?? "127.0.0.1",
            port: try file.integer("port", as: UInt16.self) ?? defaultPort,
            dataDirectory: try file.string("dataDirectory") ?? defaultDataDirectory,
            publicBaseURL: try file.string("publicBaseURL"),
            threads: try file.integer("threads") ?? 0,
            connections: ConnectionLimits(
                maxConnections: try file.integer("maxConnections") ?? 4096,
                headerTimeoutSeconds: try file.integer("headerTimeoutSeconds") ?? 30,
                maxConnectionsPerAddress: try file.integer("maxConnectionsPerAddress") ?? 0))
        if let cors = try file.object("cors") {
            let origins = try cors.strings("allowedOrigins") ?? []
            if let problem = CORSPolicy.problem(in: origins) { throw cors.invalid("allowedOrigins", problem) }
            settings.cors = CORSPolicy(allowedOrigins: origins)
        }
        if let texts = try file.strings("trustedProxies") {
            do {
                settings.trustedProxies = try TrustedProxies(texts)
            } catch {
                throw ConfigurationError(error.description)
            }
        }
        return settings
    }
}
