public import Basics
public import HTTPKit
public import Outbox
public import ServerShell
import ObjectStorage

/// Everything up-server needs to run. Defaults are for local development on loopback.
///
/// Only the shell (`ServiceHost.main`) reads files and the environment; JSON loading lives in
/// `UpServerConfiguration+JSON.swift` with every key and its default.
public struct UpServerConfiguration: Sendable {
    /// Listen address. Default `127.0.0.1`.
    public var host: String
    /// Listen port; 0 picks a free one. Default 9000.
    public var port: UInt16
    /// Blobs (`blobs/`), the index (`index.sqlite3`) and the ctx secret live here. Default `data/up`.
    public var dataDirectory: String
    /// Externally visible base URL, returned as `host` in mkblk/bput replies (spec §4.2). Default
    /// none: `http://<host>:<bound port>`. Must stay stable across restarts: SDKs record it (§9.4).
    public var publicBaseURL: String?
    /// AccessKey → SecretKey pairs whose tokens are accepted (and which sign callbacks).
    public var keys: [String: String]
    /// Buckets that exist; any other is `631 no such bucket`.
    public var buckets: [String]
    /// Buckets whose objects `GET /dl/<bucket>/<key>` serves without a signed URL; each must be
    /// one of ``buckets``. Default none: every download needs `?e=…&token=…`.
    public var publicBuckets: [String]
    /// Secret under which ctx values are authenticated (DESIGN.md: ctx is self-verifying). Nodes
    /// sharing storage must share it. Default none: generated once into `<dataDirectory>/ctx-secret`.
    public var contextSecret: String?
    /// How long a ctx (v1 block) stays valid, seconds. Default 7 days, as Qiniu (spec §4.2).
    public var contextLifetimeSeconds: Int64
    /// How long a v2 uploadId stays valid, seconds. Default 7 days (spec §5).
    public var multipartLifetimeSeconds: Int64
    /// fsync every v1 chunk before its reply, also one that leaves its block incomplete (every
    /// other blob is fsynced before the reply that acknowledges it anyway: `BlobWriter`). Default
    /// false (DESIGN.md).
    public var syncEveryChunk: Bool
    /// Callback settings (spec §3).
    public var callback: Callback
    /// Seconds between garbage-collection sweeps of expired blocks and uploads. Default 300.
    public var sweepIntervalSeconds: Int64
    /// How old, in seconds, a store blob no row names must be before a sweep removes it as an
    /// orphan (`OrphanRule`). Default 3600; longer than any pause between a blob's creation and
    /// its row, and than the clock skew between the instances and the store.
    public var orphanGraceSeconds: Int64
    /// HTTP worker threads; 0 (the default) is one per core.
    public var threads: Int
    /// The slow-loris defences (JSON keys as in `CommonSettings`); default 4096 connections, a
    /// 30 s request-head deadline, no per-address limit.
    public var connections: ConnectionLimits
    /// The web origins allowed to call this server from a browser (`cors.allowedOrigins`);
    /// none by default (CORS off). Applied by `CORSMiddleware`; a reload applies a new list.
    public var cors: CORSPolicy = .off
    /// Reverse proxies whose `X-Forwarded-For` names the client in the access log
    /// (`trustedProxies`, CIDR blocks); nobody by default. A change takes a restart.
    public var trustedProxies: TrustedProxies = .none
    /// The PostgreSQL index (`"database"` or `UPGATE_UP_DATABASE_URL`): a `postgresql://` URL
    /// without a password (libpq reads it from `PGPASSWORD` or a password file). Default none: the
    /// SQLite index in `<dataDirectory>/index.sqlite3`.
    public var database: String? = nil
    /// Where blobs live (`"blobStore"`). Default `.disk`: `<dataDirectory>/blobs`.
    public var blobStore: BlobStore = .disk

    /// Creates a configuration; every parameter has the documented default.
    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 9000,
        dataDirectory: String = "data/up",
        publicBaseURL: String? = nil,
        keys: [String: String],
        buckets: [String],
        publicBuckets: [String] = [],
        contextSecret: String? = nil,
        contextLifetimeSeconds: Int64 = 7 * 86_400,
        multipartLifetimeSeconds: Int64 = 7 * 86_400,
        syncEveryChunk: Bool = false,
        callback: Callback = Callback(),
        sweepIntervalSeconds: Int64 = 300,
        orphanGraceSeconds: Int64 = 3600,
        threads: Int = 0,
        connections: ConnectionLimits = ConnectionLimits()
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.publicBaseURL = publicBaseURL
        self.keys = keys
        self.buckets = buckets
        self.publicBuckets = publicBuckets
        self.contextSecret = contextSecret
        self.contextLifetimeSeconds = contextLifetimeSeconds
        self.multipartLifetimeSeconds = multipartLifetimeSeconds
        self.syncEveryChunk = syncEveryChunk
        self.callback = callback
        self.sweepIntervalSeconds = sweepIntervalSeconds
        self.orphanGraceSeconds = orphanGraceSeconds
        self.threads = threads
        self.connections = connections
    }

    /// How callbacks are signed, sent and retried.
    public struct Callback: Sendable, Equatable {
        /// Signature scheme of callback requests.
        public enum Scheme: String, Sendable, Codable, CaseIterable {
            /// `QBox AK:sign` — what every SDK verifier accepts (spec §3.2). The default.
            case qbox
            /// `Qiniu AK:sign` with a signed `X-Qiniu-Date` (spec §3.3).
            case qiniu
        }
        /// Default `.qbox`.
        public var scheme: Scheme
        /// Per-URL timeout, seconds (spec §3.1 recommends 5). Default 5.
        public var timeoutSeconds: Double
        /// Background redelivery attempts after the synchronous one fails. Default 12.
        public var maxRetries: Int
        /// First retry delay, seconds; doubles per attempt. Default 5.
        public var retryBaseDelaySeconds: Int64
        /// Largest retry delay, seconds. Default 3600.
        public var retryMaxDelaySeconds: Int64

        /// Creates the settings.
        public init(
            scheme: Scheme = .qbox, timeoutSeconds: Double = 5, maxRetries: Int = 12, retryBaseDelaySeconds: Int64 = 5,
            retryMaxDelaySeconds: Int64 = 3600
        ) {
            self.scheme = scheme
            self.timeoutSeconds = timeoutSeconds
            self.maxRetries = maxRetries
            self.retryBaseDelaySeconds = retryBaseDelaySeconds
            self.retryMaxDelaySeconds = retryMaxDelaySeconds
        }

        /// The callback outbox's schedule: the synchronous attempt, then `maxRetries` background
        /// ones, `retryBaseDelaySeconds` × 2^(n−1) apart, capped at `retryMaxDelaySeconds`; dead after.
        public var schedule: OutboxDelivery.Schedule {
            OutboxDelivery.Schedule(
                maxAttempts: maxRetries + 1, firstDelay: retryBaseDelaySeconds, maxDelay: retryMaxDelaySeconds)
        }
    }

    /// Checks invariants; throws a message naming the setting.
    public func validate() throws(ConfigurationError) {
        guard !keys.isEmpty else {
            throw ConfigurationError(
                "no key pair: list \"keys\" in the configuration file or set UPGATE_ACCESS_KEY and UPGATE_SECRET_KEY")
        }
        for (accessKey, secretKey) in keys where accessKey.isEmpty || accessKey.contains(":") || secretKey.isEmpty {
            throw ConfigurationError("access keys must be non-empty without ':' and have a secret key")
        }
        guard !buckets.isEmpty, buckets.allSatisfy({ !$0.isEmpty && !$0.contains(":") }) else {
            throw ConfigurationError("buckets must list at least one name, none empty or containing ':'")
        }
        if let unknown = publicBuckets.first(where: { !buckets.contains($0) }) {
            throw ConfigurationError("publicBuckets lists \"\(unknown)\", which is not one of buckets")
        }
        guard contextLifetimeSeconds > 0, multipartLifetimeSeconds > 0 else {
            throw ConfigurationError("context and multipart lifetimes must be > 0")
        }
        guard callback.timeoutSeconds > 0, callback.maxRetries >= 0, callback.retryBaseDelaySeconds > 0 else {
            throw ConfigurationError("callback timeout and retry delays must be > 0")
        }
        guard orphanGraceSeconds > 0 else {
            throw ConfigurationError(
                "orphanGraceSeconds must be > 0 (seconds an unnamed blob is kept; default 3600), got \(orphanGraceSeconds)")
        }
        if let secret = contextSecret, secret.utf8.count < 16 {
            throw ConfigurationError("contextSecret must be at least 16 bytes")
        }
        if let problem = connections.problem { throw ConfigurationError(problem) }
        _ = try databaseConnectionString()
        if case .s3(let settings) = blobStore { try settings.validate() }
    }
}
