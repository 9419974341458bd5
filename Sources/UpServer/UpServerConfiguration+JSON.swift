import Basics
import HTTPKit
public import Foundation

/// Loading ``UpServerConfiguration`` from `Config/up-server.json` and the environment.
///
/// JSON keys (all optional unless marked; unknown keys such as `_comment` are ignored):
///
/// | key | default |
/// |---|---|
/// | `host`, `port` | `"127.0.0.1"`, `9000` |
/// | `dataDirectory` | `"data/up"` |
/// | `publicBaseURL` | none: `http://<host>:<bound port>` |
/// | `keys` | required here or in the environment: `[{"accessKey": "...", "secretKey": "..."}]` |
/// | `buckets` | required: `["demo"]` |
/// | `contextSecret` | none: generated into `<dataDirectory>/ctx-secret` |
/// | `contextLifetimeSeconds`, `multipartLifetimeSeconds` | `604800` (7 days) |
/// | `syncEveryChunk` | `false` |
/// | `callback` | `{"scheme": "qbox", "timeoutSeconds": 5, "maxRetries": 12, "retryBaseDelaySeconds": 5, "retryMaxDelaySeconds": 3600}` |
/// | `sweepIntervalSeconds` | `300` |
/// | `threads` | `0` (= cores) |
/// | `maxConnections`, `headerTimeoutSeconds`, `maxConnectionsPerAddress` | `4096`, `30`, `0` (no limit) |
///
/// Environment overrides: `UPGATE_ACCESS_KEY` + `UPGATE_SECRET_KEY` (replace the key list with
/// that one pair), `UPGATE_UP_PUBLIC_BASE_URL`, `UPGATE_CTX_SECRET`.
extension UpServerConfiguration {
    /// Parses the JSON text, applies `environment` overrides and validates.
    public static func load(json: Data, environment: [String: String]) throws -> UpServerConfiguration {
        let file: FileFormat
        do {
            file = try JSONDecoder().decode(FileFormat.self, from: json)
        } catch {
            throw ConfigurationError("invalid configuration JSON: \(error)")
        }
        let callback = Callback(
            scheme: file.callback?.scheme ?? .qbox, timeoutSeconds: file.callback?.timeoutSeconds ?? 5,
            maxRetries: file.callback?.maxRetries ?? 12,
            retryBaseDelaySeconds: file.callback?.retryBaseDelaySeconds ?? 5,
            retryMaxDelaySeconds: file.callback?.retryMaxDelaySeconds ?? 3600)
        var keys: [String: String] = [:]
        for pair in file.keys ?? [] { keys[pair.accessKey] = pair.secretKey }
        var configuration = UpServerConfiguration(
            host: file.host ?? "127.0.0.1", port: file.port ?? 9000, dataDirectory: file.dataDirectory ?? "data/up",
            publicBaseURL: file.publicBaseURL, keys: keys, buckets: file.buckets ?? [],
            contextSecret: file.contextSecret,
            contextLifetimeSeconds: file.contextLifetimeSeconds ?? 7 * 86_400,
            multipartLifetimeSeconds: file.multipartLifetimeSeconds ?? 7 * 86_400,
            syncEveryChunk: file.syncEveryChunk ?? false, callback: callback,
            sweepIntervalSeconds: file.sweepIntervalSeconds ?? 300, threads: file.threads ?? 0,
            connections: ConnectionLimits(
                maxConnections: file.maxConnections ?? 4096,
                headerTimeoutSeconds: file.headerTimeoutSeconds ?? 30,
                maxConnectionsPerAddress: file.maxConnectionsPerAddress ?? 0))
        if let accessKey = environment["UPGATE_ACCESS_KEY"], let secretKey = environment["UPGATE_SECRET_KEY"],
            !accessKey.isEmpty, !secretKey.isEmpty
        {
            configuration.keys = [accessKey: secretKey]
        }
        if let value = environment["UPGATE_UP_PUBLIC_BASE_URL"], !value.isEmpty { configuration.publicBaseURL = value }
        if let value = environment["UPGATE_CTX_SECRET"], !value.isEmpty { configuration.contextSecret = value }
        try configuration.validate()
        return configuration
    }

    private struct FileFormat: Decodable {
        struct KeyPair: Decodable {
            var accessKey: String
            var secretKey: String
        }
        struct CallbackFormat: Decodable {
            var scheme: Callback.Scheme?
            var timeoutSeconds: Double?
            var maxRetries: Int?
            var retryBaseDelaySeconds: Int64?
            var retryMaxDelaySeconds: Int64?
        }
        var host: String?
        var port: UInt16?
        var dataDirectory: String?
        var publicBaseURL: String?
        var keys: [KeyPair]?
        var buckets: [String]?
        var contextSecret: String?
        var contextLifetimeSeconds: Int64?
        var multipartLifetimeSeconds: Int64?
        var syncEveryChunk: Bool?
        var callback: CallbackFormat?
        var sweepIntervalSeconds: Int64?
        var threads: Int?
        var maxConnections: Int?
        var headerTimeoutSeconds: Int?
        var maxConnectionsPerAddress: Int?
    }
}
