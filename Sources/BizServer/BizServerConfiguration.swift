public import Basics
public import HTTPKit
public import ServerShell

/// Everything biz-server needs to run. Defaults are for local development on loopback.
///
/// Only the shell (`ServiceHost.main`) reads files and the environment; the library receives a
/// finished value. JSON loading (with every key and its default) lives in
/// `BizServerConfiguration+JSON.swift`, what the shell needs in `BizServerConfiguration+Service.swift`.
public struct BizServerConfiguration: Sendable {
    /// Address to listen on. Default `127.0.0.1`.
    public var host: String
    /// Port to listen on; 0 picks a free one. Default 8080.
    public var port: UInt16
    /// Directory for the SQLite store. Default `data/biz`.
    public var dataDirectory: String
    /// Externally visible base URL (`https://biz.example.com`) used to build the callback URL put
    /// into every token. Default none: derived from the listen address and the port actually bound.
    public var publicBaseURL: String?
    /// Qiniu AccessKey the tokens are signed under and callbacks must carry.
    public var accessKey: String
    /// Qiniu SecretKey (never logged).
    public var secretKey: String
    /// Up hosts handed to clients with each token. Default `["http://127.0.0.1:9000"]`.
    public var upHosts: [String]
    /// Registered API clients.
    public var clients: [Client]
    /// Per-client token issuing rate. Default 10 tokens/s with bursts of 20.
    public var rateLimit: RateLimit
    /// Replay protection for callbacks. Default: ±300 s skew, date not required.
    public var replay: ReplayProtection
    /// `PRAGMA synchronous` for the store: `full` (default; a recorded callback survives power
    /// loss) or `normal`.
    public var durableWrites: Bool
    /// Where the state lives: nil (default) → SQLite files in `dataDirectory`; a
    /// `postgresql://user@host:5432/db` URL (no password: `PGPASSWORD` or a passfile) → that
    /// PostgreSQL database, shared by every instance (`"database"` or `UPGATE_BIZ_DATABASE_URL`).
    public var database: String? = nil
    /// MHD worker threads. Default: the number of cores.
    public var threads: Int
    /// Connection limits: at most 4096 at once, a request-head deadline of 30 s and no limit per
    /// address (slow-loris defences). JSON keys `maxConnections`, `headerTimeoutSeconds`,
    /// `maxConnectionsPerAddress`.
    public var connections: ConnectionLimits
    /// The web origins allowed to call this server from a browser (`cors.allowedOrigins`);
    /// none by default (CORS off). Applied by `CORSMiddleware`; a reload applies a new list.
    public var cors: CORSPolicy = .off
    /// End users authenticated by the app's own JWTs; none by default (see `JWTConfiguration`).
    public var jwt: JWTConfiguration? = nil
    /// Who may use the admin API and how client addresses are found and limited (issue 11 §3);
    /// see `BizServerConfiguration+Access.swift`.
    public var access = Access()
    /// Where uploads are announced as Standard Webhooks; none by default (see `WebhookEndpoint`,
    /// `BizServerConfiguration+Webhooks.swift`).
    public var webhooks: [WebhookEndpoint] = []
    /// Warning lines the webhook checks found at load (a private target allowed, a name that
    /// did not resolve).
    public var webhookWarnings: [StartupWarning] = []

    /// Creates a configuration; every parameter has the documented default.
    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 8080,
        dataDirectory: String = "data/biz",
        publicBaseURL: String? = nil,
        accessKey: String,
        secretKey: String,
        upHosts: [String] = ["http://127.0.0.1:9000"],
        clients: [Client],
        rateLimit: RateLimit = RateLimit(),
        replay: ReplayProtection = ReplayProtection(),
        durableWrites: Bool = true,
        threads: Int = 0,
        connections: ConnectionLimits = ConnectionLimits()
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.publicBaseURL = publicBaseURL
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.upHosts = upHosts
        self.clients = clients
        self.rateLimit = rateLimit
        self.replay = replay
        self.durableWrites = durableWrites
        self.threads = threads
        self.connections = connections
    }

    /// How the callback body is encoded.
    public enum CallbackBodyType: String, Sendable, Codable, CaseIterable {
        /// `application/x-www-form-urlencoded`: the body is covered by the QBox signature (spec §3.2).
        case form
        /// `application/json`: QBox does not sign the body, so biz-server also puts `$(bodySha1)` in
        /// the callback URL and checks it (see `CallbackController`).
        case json
    }

    /// One API client: who may ask for tokens, and the policy template their tokens get.
    public struct Client: Sendable, Equatable {
        /// Stable client id, recorded with each upload. Also the default `endUser`.
        public var id: String
        /// Hex SHA-256 of the client's API key (the key itself is never stored); `""` when the
        /// client has only keys from the key store.
        public var apiKeySHA256: String
        /// `endUser` put into the policy. Default: the client id.
        public var endUser: String?
        /// Bucket the client uploads to.
        public var bucket: String
        /// Keys must start with this; `{client}` is replaced by the client id. Default `{client}/`.
        public var keyPrefix: String
        /// Smallest object accepted, bytes. Default none.
        public var fsizeMin: Int64?
        /// Largest object accepted, bytes. Default none.
        public var fsizeLimit: Int64?
        /// Qiniu mimeLimit (`image/*;video/*`, or `!…` for a deny-list). Default none.
        public var mimeLimit: String?
        /// Token lifetime in seconds, 1…86400. Default 3600.
        public var tokenLifetimeSeconds: Int64
        /// Never overwrite an existing key. Default false.
        public var insertOnly: Bool
        /// Callback body encoding. Default form.
        public var callbackBodyType: CallbackBodyType
        /// returnBody template; only used by Qiniu when no callback is configured. Default none.
        public var returnBody: String?
        /// Constant `x:` variables added to every callback of this client (e.g. `x:app`).
        public var vars: [String: String]

        /// Creates a client; optional parameters have the documented defaults.
        public init(
            id: String,
            apiKeySHA256: String,
            endUser: String? = nil,
            bucket: String,
            keyPrefix: String = "{client}/",
            fsizeMin: Int64? = nil,
            fsizeLimit: Int64? = nil,
            mimeLimit: String? = nil,
            tokenLifetimeSeconds: Int64 = 3600,
            insertOnly: Bool = false,
            callbackBodyType: CallbackBodyType = .form,
            returnBody: String? = nil,
            vars: [String: String] = [:]
        ) {
            self.id = id
            self.apiKeySHA256 = apiKeySHA256.lowercased()
            self.endUser = endUser
            self.bucket = bucket
            self.keyPrefix = keyPrefix
            self.fsizeMin = fsizeMin
            self.fsizeLimit = fsizeLimit
            self.mimeLimit = mimeLimit
            self.tokenLifetimeSeconds = tokenLifetimeSeconds
            self.insertOnly = insertOnly
            self.callbackBodyType = callbackBodyType
            self.returnBody = returnBody
            self.vars = vars
        }

        /// The key prefix with `{client}` substituted.
        ///
        /// Computed for every token, so ASCII prefixes (the usual case) are done on bytes rather
        /// than by the generic `String.replacing`; the result is the same.
        public var resolvedKeyPrefix: String {
            let source = Array(keyPrefix.utf8)
            let placeholder = Array("{client}".utf8)
            guard source.allSatisfy({ $0 < 0x80 }) else { return keyPrefix.replacing("{client}", with: id) }
            guard source.contains(placeholder[0]) else { return keyPrefix }
            var out: [UInt8] = []
            out.reserveCapacity(source.count + id.utf8.count)
            var index = 0
            while index < source.count {
                if source[index] == placeholder[0], source[index...].starts(with: placeholder) {
                    out.append(contentsOf: id.utf8)
                    index += placeholder.count
                } else {
                    out.append(source[index])
                    index += 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Token-bucket parameters for `POST /v1/uptoken`, per client.
    public struct RateLimit: Sendable, Equatable {
        /// Sustained tokens per second. Default 10.
        public var tokensPerSecond: Double
        /// Burst size. Default 20.
        public var burst: Double
        /// Creates a rate limit.
        public init(tokensPerSecond: Double = 10, burst: Double = 20) {
            self.tokensPerSecond = tokensPerSecond
            self.burst = burst
        }
    }

    /// Replay protection for callbacks (what no Qiniu SDK has).
    public struct ReplayProtection: Sendable, Equatable {
        /// A signed `X-Qiniu-Date` further than this from now is refused. Default 300 s.
        public var maxClockSkewSeconds: Int64
        /// Refuse callbacks without a signed `X-Qiniu-Date` (i.e. QBox ones). Default false, since
        /// Qiniu's own servers and SDKs sign callbacks with QBox, which carries no date.
        public var requireSignedDate: Bool
        /// Creates the settings.
        public init(maxClockSkewSeconds: Int64 = 300, requireSignedDate: Bool = false) {
            self.maxClockSkewSeconds = maxClockSkewSeconds
            self.requireSignedDate = requireSignedDate
        }
    }

    /// Checks invariants; throws a message naming the offending setting.
    public func validate() throws(ConfigurationError) {
        guard !accessKey.isEmpty else {
            throw ConfigurationError("no accessKey: set \"accessKey\" in the configuration file or UPGATE_ACCESS_KEY")
        }
        guard !accessKey.contains(":") else { throw ConfigurationError("accessKey must contain no ':'") }
        guard !secretKey.isEmpty else {
            throw ConfigurationError("no secretKey: set \"secretKey\" in the configuration file or UPGATE_SECRET_KEY")
        }
        guard !upHosts.isEmpty else { throw ConfigurationError("upHosts must list at least one up host") }
        guard rateLimit.tokensPerSecond > 0, rateLimit.burst >= 1 else {
            throw ConfigurationError("rateLimit needs tokensPerSecond > 0 and burst >= 1")
        }
        guard replay.maxClockSkewSeconds > 0 else { throw ConfigurationError("maxClockSkewSeconds must be > 0") }
        if let problem = connections.problem { throw ConfigurationError(problem) }
        try jwt?.validate(clients: clients)
        try access.validate()
        var seenIDs = Set<String>()
        var seenKeys = Set<String>()
        for client in clients {
            let name = "client '\(client.id)'"
            guard !client.id.isEmpty, seenIDs.insert(client.id).inserted else {
                throw ConfigurationError("client ids must be non-empty and unique (\(name))")
            }
            guard client.apiKeySHA256.isEmpty || Self.isSHA256Hex(client.apiKeySHA256) else {
                throw ConfigurationError("\(name): apiKeySHA256 must be 64 hex digits")
            }
            guard client.apiKeySHA256.isEmpty || seenKeys.insert(client.apiKeySHA256).inserted else {
                throw ConfigurationError("\(name): the same API key is configured twice")
            }
            guard !client.bucket.isEmpty, !client.bucket.contains(":") else {
                throw ConfigurationError("\(name): bucket must be non-empty and contain no ':'")
            }
            guard (1...86_400).contains(client.tokenLifetimeSeconds) else {
                throw ConfigurationError("\(name): tokenLifetimeSeconds must be 1…86400 (24 h at most)")
            }
            if let limit = client.mimeLimit, limit.trimmingCharacters(in: " ").isEmpty || limit == "!" {
                throw ConfigurationError("\(name): mimeLimit must list at least one type (omit it to allow all)")
            }
            if let min = client.fsizeMin, let max = client.fsizeLimit, min > max {
                throw ConfigurationError("\(name): fsizeMin is larger than fsizeLimit")
            }
            for name in client.vars.keys where !CustomVariable.isValidName(name) {
                throw ConfigurationError("client '\(client.id)': variable name '\(name)' must look like x:name")
            }
        }
    }
}

/// Rules for custom (`x:`) variable names and values accepted from configuration and clients.
enum CustomVariable {
    /// At most this many client variables per token.
    static let maxCount = 20
    /// At most this many UTF-8 bytes per value.
    static let maxValueBytes = 1024

    /// `x:` followed by 1…64 of `[A-Za-z0-9_-]` — safe inside form bodies and path segments.
    static func isValidName(_ name: String) -> Bool {
        guard name.hasPrefix("x:") else { return false }
        let rest = name.utf8.dropFirst(2)
        return (1...64).contains(rest.count) && rest.allSatisfy(isURLSafeCharacter)
    }
}
