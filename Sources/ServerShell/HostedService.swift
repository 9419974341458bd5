public import Basics
public import Foundation
public import HTTPKit
import NativeOS

/// A server that ``ServiceHost/main(_:usage:arguments:environment:)`` can run as a process:
/// biz-server and up-server.
public protocol HostedService: AnyObject, Sendable {
    /// Its configuration.
    associatedtype Configuration: ServiceConfiguration

    /// Opens the service: stores, secrets, routes (nothing listens yet). The configuration is
    /// valid and its data directory exists.
    ///
    /// - Throws: ``ConfigurationError`` for a problem the configuration causes (exit 78);
    ///   anything else (a store that cannot be opened) is a runtime failure (exit 1).
    static func open(configuration: Configuration, logger: Logger) throws -> Self

    /// The host that serves it.
    var host: ServiceHost { get }

    /// Work to finish before the server listens (biz-server loads its stored API keys, so a
    /// stored key works from the first request on). Default: nothing.
    ///
    /// - Throws: a runtime failure (exit 1).
    func prepare() async throws

    /// Applies `configuration`, re-read from the file on SIGHUP and already valid, to the
    /// running service, and says what changed; settings that only a restart can change are
    /// listed in ``ReloadSummary/needsRestart`` and keep their running values.
    ///
    /// - Throws: ``ConfigurationError`` if it cannot be applied; the running configuration stays.
    func reload(_ configuration: Configuration) throws(ConfigurationError) -> ReloadSummary
}

extension HostedService {
    /// Nothing to prepare.
    public func prepare() async throws {}
}

/// What a server's configuration offers the shell.
public protocol ServiceConfiguration: Sendable {
    /// The program name, e.g. `biz-server`.
    static var serviceName: String { get }
    /// The file read without `--config`, e.g. `Config/biz-server.json`.
    static var defaultPath: String { get }

    /// Reads every key of `file` it knows (``ConfigurationObject``) and applies `environment`'s
    /// overrides; the shell then refuses keys left unread and validates.
    static func read(_ file: ConfigurationObject, environment: [String: String]) throws(ConfigurationError) -> Self

    /// Listen address (`--host`).
    var host: String { get set }
    /// Listen port (`--port`).
    var port: UInt16 { get set }
    /// Data directory (`--data-dir`); the shell creates it.
    var dataDirectory: String { get set }
    /// HTTP worker threads; 0 = one per core.
    var threads: Int { get }
    /// Connection limits (`maxConnections`, `headerTimeoutSeconds`, `maxConnectionsPerAddress`).
    var connections: ConnectionLimits { get }
    /// The proxies whose `X-Forwarded-For` names the client in rate limits and the access log.
    var trustedProxies: TrustedProxies { get }

    /// Checks invariants; throws a message naming the setting.
    func validate() throws(ConfigurationError)

    /// What is worth a warning line at start-up (development credentials, no clients).
    var warnings: [StartupWarning] { get }
}

extension ServiceConfiguration {
    /// Reads the configuration file at `path` (as the user named it), then as
    /// ``load(json:source:environment:overrides:)``.
    ///
    /// - Throws: ``ConfigurationError``; a file that cannot be read is `cannot read configuration
    ///   <path>: <reason> (choose one with --config FILE)`.
    public static func load(
        path: String, environment: [String: String], overrides: ServerCommandLine.Overrides = .init()
    ) throws(ConfigurationError) -> Self {
        let bytes: [UInt8]
        do {
            bytes = try NativeFile.contents(atPath: path)
        } catch {
            throw ConfigurationError("cannot read configuration \(path): \(error.reason) (choose one with --config FILE)")
        }
        return try load(json: bytes, source: path, environment: environment, overrides: overrides)
    }

    /// Parses configuration JSON that is not a file (tests, library callers; messages name it
    /// `the configuration`), applies `environment` and validates.
    public static func load(json: Data, environment: [String: String]) throws(ConfigurationError) -> Self {
        try load(json: Array(json), source: "the configuration", environment: environment)
    }

    /// Reads the JSON text `bytes` (of `source`) strictly, applies `environment`, then the
    /// command line's `overrides`, and validates.
    public static func load(
        json bytes: [UInt8], source: String, environment: [String: String],
        overrides: ServerCommandLine.Overrides = .init()
    ) throws(ConfigurationError) -> Self {
        let file = try ConfigurationFile.parse(bytes, source: source)
        var configuration = try read(file, environment: environment)
        try file.finish()
        if let port = overrides.port { configuration.port = port }
        if let host = overrides.host { configuration.host = host }
        if let directory = overrides.dataDirectory { configuration.dataDirectory = directory }
        try configuration.validate()
        return configuration
    }
}

/// What a reload changed, for the `configuration reloaded` log line (never a secret: a changed
/// SecretKey is `"changed"`).
public struct ReloadSummary: Sendable {
    /// Fields of the log line, in order.
    public var changes: [(key: String, value: Logger.Value)]
    /// Settings whose new values wait for a restart.
    public var needsRestart: [String]

    /// Creates a summary.
    public init(changes: [(key: String, value: Logger.Value)] = [], needsRestart: [String] = []) {
        self.changes = changes
        self.needsRestart = needsRestart
    }

    /// `added`, `removed` and `changed` names between two keyed collections, comma-joined.
    public static func difference<Value: Equatable>(
        from old: [String: Value], to new: [String: Value]
    ) -> (added: String, removed: String, changed: String) {
        let added = new.keys.filter { old[$0] == nil }.sorted()
        let removed = old.keys.filter { new[$0] == nil }.sorted()
        let changed = new.keys.filter { old[$0] != nil && old[$0] != new[$0] }.sorted()
        return (added.joined(separator: ","), removed.joined(separator: ","), changed.joined(separator: ","))
    }
}
