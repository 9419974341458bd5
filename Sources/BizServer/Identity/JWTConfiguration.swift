public import Basics

/// End users authenticated by the app's own JWTs (the `jwt` block of `Config/biz-server.json`):
/// who signs them, what they must say, which client's settings their tokens get.
///
/// A `POST /v1/uptoken` whose bearer is a JWT gets a token for client `client` with `endUser` =
/// the JWT's `sub`, scoped to `keyPrefix` with `{sub}` filled in.
public struct JWTConfiguration: Sendable {
    /// Where the public keys come from.
    public enum KeySource: Sendable {
        /// No JWKS: only HS256 tokens, checked with `hs256Secret`.
        case none
        /// A JWKS loaded once, with the configuration (`jwksFile`; `path` for messages).
        case file(path: String, JWKS)
        /// A JWKS fetched on first need and when an unknown `kid` arrives (`jwksURL`).
        case url(String)
    }

    /// The public keys.
    public var keys: KeySource
    /// Shared secret for HS256 tokens (UTF-8 bytes, at least 32); `UPGATE_JWT_HS256_SECRET`
    /// overrides it. Never logged.
    public var hs256Secret: String?
    /// The one accepted `iss`, exactly.
    public var issuer: String
    /// A value the token's `aud` must contain.
    public var audience: String
    /// The `clients[]` entry whose bucket, limits, vars and callback settings the tokens get.
    public var client: String
    /// Where the user's objects go: must contain `{sub}/` exactly once. Default `users/{sub}/`.
    public var keyPrefix: String
    /// Clock skew allowed on `exp` and `nbf`, 0…300 s. Default 60.
    public var leewaySeconds: Int64
    /// Per-user limits, from the `client` entry's `tokensPerMinutePerUser` and `maxBytesPerUserPerDay`.
    public var perUser: PerUserLimits

    /// Creates the settings; see each property.
    public init(
        keys: KeySource, hs256Secret: String? = nil, issuer: String, audience: String, client: String,
        keyPrefix: String = "users/{sub}/", leewaySeconds: Int64 = 60, perUser: PerUserLimits = PerUserLimits()
    ) {
        self.keys = keys
        self.hs256Secret = hs256Secret
        self.issuer = issuer
        self.audience = audience
        self.client = client
        self.keyPrefix = keyPrefix
        self.leewaySeconds = leewaySeconds
        self.perUser = perUser
    }

    /// Limits on each end user (a `sub`) of the JWT client; none by default.
    public struct PerUserLimits: Sendable, Equatable {
        /// Tokens one user may get per minute (a bucket of this size refilled over a minute);
        /// 429 with `Retry-After` beyond. Without it each user gets the server's `rateLimit`.
        public var tokensPerMinute: Int?
        /// Bytes one user may have uploaded in the last 24 h (the sum of recorded `fsize`); a
        /// token then allows at most what is left, and 429 with `Retry-After` once nothing is.
        public var maxBytesPerDay: Int64?

        /// Creates the limits.
        public init(tokensPerMinute: Int? = nil, maxBytesPerDay: Int64? = nil) {
            self.tokensPerMinute = tokensPerMinute
            self.maxBytesPerDay = maxBytesPerDay
        }
    }

    /// A JSON Web Key Set, parsed and checked: build it from a `jwksFile`'s bytes.
    public struct JWKS: Sendable {
        let keys: [VerificationKey]

        /// Parses `json`; every key must be usable (a key left out is an error here, since the
        /// file is the operator's own) and there must be at least one.
        public init(json: [UInt8]) throws(ConfigurationError) {
            let set: JWKSet
            do {
                set = try JWKSet.parse(json)
            } catch {
                throw ConfigurationError("not a JWKS: \(error.description)")
            }
            if let note = set.notes.first { throw ConfigurationError(note) }
            guard !set.keys.isEmpty else { throw ConfigurationError("the JWKS has no signature key") }
            keys = set.keys
        }
    }

    /// Checks the settings against the configured `clients`; throws naming the `jwt.` key.
    public func validate(clients: [BizServerConfiguration.Client]) throws(ConfigurationError) {
        guard clients.contains(where: { $0.id == client }) else {
            throw ConfigurationError("jwt.client '\(client)' names no entry of clients[]")
        }
        if case .none = keys, hs256Secret == nil {
            throw ConfigurationError("jwt needs jwksFile, jwksURL or hs256Secret (or UPGATE_JWT_HS256_SECRET)")
        }
        if case .url(let url) = keys, !Self.isAcceptableURL(url) {
            throw ConfigurationError("jwt.jwksURL must be https:// (http:// only on loopback): \(url)")
        }
        if let secret = hs256Secret, secret.utf8.count < 32 {
            // RFC 7518 §3.2: an HS256 key must be at least as long as the hash, 256 bits.
            throw ConfigurationError("jwt.hs256Secret must be at least 32 bytes")
        }
        guard !issuer.isEmpty else { throw ConfigurationError("jwt.issuer must be the iss your identity provider sets") }
        guard !audience.isEmpty else { throw ConfigurationError("jwt.audience must be the aud your tokens carry for this app") }
        guard keyPrefix.ranges(of: "{sub}").count == 1, keyPrefix.contains("{sub}/") else {
            // Without the slash, user "ab" would own the keys of user "abc" too.
            throw ConfigurationError("jwt.keyPrefix must contain {sub}/ exactly once, e.g. users/{sub}/")
        }
        guard (0...300).contains(leewaySeconds) else { throw ConfigurationError("jwt.leewaySeconds must be 0…300") }
        if let tokens = perUser.tokensPerMinute, tokens < 1 {
            throw ConfigurationError("client '\(client)': tokensPerMinutePerUser must be at least 1")
        }
        if let bytes = perUser.maxBytesPerDay, bytes < 1 {
            throw ConfigurationError("client '\(client)': maxBytesPerUserPerDay must be at least 1")
        }
    }

    private static func isAcceptableURL(_ url: String) -> Bool {
        if url.hasPrefix("https://") { return url.count > 8 }
        guard url.hasPrefix("http://") else { return false }
        let host = url.dropFirst(7).prefix { $0 != "/" && $0 != "?" }
        return host.hasPrefix("127.") || host.hasPrefix("localhost:") || host == "localhost" || host.hasPrefix("[::1]")
    }
}
