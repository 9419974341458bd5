public import Basics
import HTTPKit
import Foundation
public import ServerShell

/// Loading ``UpServerConfiguration`` from `Config/up-server.json` and the environment.
///
/// The file is read strictly (`ConfigurationObject`): a key that is not in this table stops the
/// server with `unknown key "prot" in Config/up-server.json (did you mean "port"?)`, nested keys
/// too (`callback.timeoutSecond`); keys starting with `_` are comments. All keys are optional
/// unless marked:
///
/// | key | default |
/// |---|---|
/// | `host`, `port`, `dataDirectory`, `publicBaseURL`, `threads`, connection limits, `cors`, `trustedProxies` | `CommonSettings` (port `9000`, `data/up`) |
/// | `keys` | required here or in the environment: `[{"accessKey": "...", "secretKey": "..."}]` |
/// | `buckets` | required: `["demo"]` |
/// | `publicBuckets` | `[]`: buckets `GET /dl/…` serves without a signed URL (each one of `buckets`) |
/// | `contextSecret` | none: generated into `<dataDirectory>/ctx-secret` |
/// | `contextLifetimeSeconds`, `multipartLifetimeSeconds` | `604800` (7 days) |
/// | `syncEveryChunk` | `false` |
/// | `callback` | `{"scheme": "qbox", "timeoutSeconds": 5, "maxRetries": 12, "retryBaseDelaySeconds": 5, "retryMaxDelaySeconds": 3600}` |
/// | `sweepIntervalSeconds` | `300` |
/// | `orphanGraceSeconds` | `3600`: a store blob no row names is removed once older than this |
/// | `database` | none (SQLite in `<dataDirectory>`); `postgresql://user@host:5432/db`, no password |
/// | `blobStore` | none (`<dataDirectory>/blobs`); `{"type": "s3", "endpoint", "region", "bucket", "accessKeyId", "secretAccessKey"}` |
///
/// Environment overrides: `UPGATE_ACCESS_KEY` + `UPGATE_SECRET_KEY` (both or neither; together
/// they replace the key list with that one pair), `UPGATE_UP_PUBLIC_BASE_URL`, `UPGATE_CTX_SECRET`,
/// `UPGATE_UP_DATABASE_URL` (replaces `database`), `UPGATE_S3_ACCESS_KEY_ID` +
/// `UPGATE_S3_SECRET_ACCESS_KEY` (both: replace the S3 key pair).
extension UpServerConfiguration {
    /// Reads every key of the file (the shell refuses the others) and applies the environment.
    public static func read(
        _ file: ConfigurationObject, environment: [String: String]
    ) throws(ConfigurationError) -> UpServerConfiguration {
        var keys: [String: String] = [:]
        for pair in try file.objects("keys") ?? [] {
            keys[try pair.requiredString("accessKey")] = try pair.requiredString("secretKey")
        }
        let callback = try file.object("callback")
        let common = try CommonSettings.read(file, defaultPort: 9000, defaultDataDirectory: "data/up")
        var configuration = UpServerConfiguration(
            host: common.host, port: common.port, dataDirectory: common.dataDirectory,
            publicBaseURL: common.publicBaseURL, keys: keys, buckets: try file.strings("buckets") ?? [],
            publicBuckets: try file.strings("publicBuckets") ?? [],
            contextSecret: try file.string("contextSecret"),
            contextLifetimeSeconds: try file.integer("contextLifetimeSeconds", as: Int64.self) ?? 7 * 86_400,
            multipartLifetimeSeconds: try file.integer("multipartLifetimeSeconds", as: Int64.self) ?? 7 * 86_400,
            syncEveryChunk: try file.bool("syncEveryChunk") ?? false,
            callback: Callback(
                scheme: try callback?.choice("scheme", as: Callback.Scheme.self) ?? .qbox,
                timeoutSeconds: try callback?.number("timeoutSeconds") ?? 5,
                maxRetries: try callback?.integer("maxRetries") ?? 12,
                retryBaseDelaySeconds: try callback?.integer("retryBaseDelaySeconds", as: Int64.self) ?? 5,
                retryMaxDelaySeconds: try callback?.integer("retryMaxDelaySeconds", as: Int64.self) ?? 3600),
            sweepIntervalSeconds: try file.integer("sweepIntervalSeconds", as: Int64.self) ?? 300,
            orphanGraceSeconds: try file.integer("orphanGraceSeconds", as: Int64.self) ?? 3600,
            threads: common.threads, connections: common.connections)
        configuration.cors = common.cors
        configuration.trustedProxies = common.trustedProxies
        (configuration.database, configuration.blobStore) = try readStores(file, environment: environment)
        if let pair = try KeyPairVariables.read(environment) { configuration.keys = [pair.accessKey: pair.secretKey] }
        if let value = environment["UPGATE_UP_PUBLIC_BASE_URL"], !value.isEmpty { configuration.publicBaseURL = value }
        if let value = environment["UPGATE_CTX_SECRET"], !value.isEmpty { configuration.contextSecret = value }
        return configuration
    }
}

extension UpServerConfiguration: ServiceConfiguration {
    /// `up-server`.
    public static let serviceName = "up-server"
    /// `Config/up-server.json`.
    public static let defaultPath = "Config/up-server.json"

    /// A warning line at start-up (and after a reload) while the development AK/SK is accepted.
    public var warnings: [StartupWarning] {
        keys.contains { DevelopmentCredentials.isDevelopment(accessKey: $0.key, secretKey: $0.value) }
            ? [.developmentKeys] : []
    }

    /// Every setting but the keys and buckets is built into the running server (stores, tasks,
    /// listener): the names of those that differ in `other`, which a reload cannot apply.
    func restartOnlyDifferences(to other: UpServerConfiguration) -> [String] {
        var names: [String] = []
        if publicBaseURL != other.publicBaseURL { names.append("publicBaseURL") }
        if contextSecret != other.contextSecret { names.append("contextSecret") }
        if contextLifetimeSeconds != other.contextLifetimeSeconds { names.append("contextLifetimeSeconds") }
        if multipartLifetimeSeconds != other.multipartLifetimeSeconds { names.append("multipartLifetimeSeconds") }
        if syncEveryChunk != other.syncEveryChunk { names.append("syncEveryChunk") }
        if callback != other.callback { names.append("callback") }
        if sweepIntervalSeconds != other.sweepIntervalSeconds { names.append("sweepIntervalSeconds") }
        if orphanGraceSeconds != other.orphanGraceSeconds { names.append("orphanGraceSeconds") }
        if threads != other.threads { names.append("threads") }
        if database != other.database { names.append("database") }
        if blobStore.summary != other.blobStore.summary { names.append("blobStore") }
        if connections != other.connections { names.append("maxConnections/headerTimeoutSeconds/maxConnectionsPerAddress") }
        if trustedProxies != other.trustedProxies { names.append("trustedProxies") }
        return names
    }
}
