import Basics
import NativeCrypto

/// Finds the API client behind an `Authorization: Bearer <api key>` header.
///
/// Keys are known only as SHA-256 hashes (DESIGN.md, "Secrets"): the presented key is hashed
/// and looked up, so no plaintext key is ever held, and comparing fixed-size digests of a secret
/// leaks nothing useful about the secret through timing.
///
/// Two kinds of key work side by side: the one per client in the configuration (file or
/// `UPGATE_API_KEYS`), fixed for the process's life, and any number per client in the key store
/// (`LiveAPIKeys`, which follows `biz-server keys create|revoke` while the server runs), so a key
/// is rotated by creating the new one, deploying it, then revoking the old.
struct ClientDirectory: Sendable {
    /// Who a request authenticated as.
    struct Caller: Sendable {
        /// The client.
        let client: BizServerConfiguration.Client
        /// The key's id: `key_…` for a stored key, `config:<client>` for the configured one.
        let keyID: String
    }

    /// The configured keys, by hash; their `Caller`s are made once here, not per request.
    private let callersByKeyHash: [String: Caller]
    private let clientsByID: [String: BizServerConfiguration.Client]
    private let stored: LiveAPIKeys?
    private let clock: any WallClock

    /// A directory of `clients`' configured keys and, when given, the `stored` ones (whose
    /// expiry is checked against `clock`).
    init(_ clients: [BizServerConfiguration.Client], stored: LiveAPIKeys? = nil, clock: any WallClock = SystemClock()) {
        var index: [String: Caller] = [:]
        for client in clients where !client.apiKeySHA256.isEmpty {
            index[client.apiKeySHA256] = Caller(client: client, keyID: APIKeyListing.configurationID(client.id))
        }
        callersByKeyHash = index
        clientsByID = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.stored = stored
        self.clock = clock
    }

    /// The client whose API key is in `authorization`.
    func authenticate(authorization: String?) throws(BizError) -> BizServerConfiguration.Client {
        try caller(authorization: authorization).client
    }

    /// The client and key behind `authorization`: a configured key, else a stored one that is
    /// neither revoked nor expired (an expired one is a 401 of its own, so its holder knows to
    /// rotate), for a client the configuration still has.
    func caller(authorization: String?) throws(BizError) -> Caller {
        guard let key = Self.bearer(authorization) else { throw BizError.missingAPIKey }
        guard !key.isEmpty, key.utf8.count <= 512 else { throw BizError.badAPIKey }
        let hash = BizServerConfiguration.apiKeyHash(key)
        if let caller = callersByKeyHash[hash] { return caller }
        guard let entry = stored?.lookup(hash: hash), let client = clientsByID[entry.clientID] else {
            throw BizError.badAPIKey
        }
        if let expiresAt = entry.expiresAt, clock.now() >= Double(expiresAt) {
            throw BizError.expiredAPIKey.with(detail: "key \(entry.id) expired at \(expiresAt)")
        }
        return Caller(client: client, keyID: entry.id)
    }

    /// The credential of an `Authorization: Bearer …` header (scheme case-insensitive, spaces
    /// around it trimmed), nil without one; `""` for a bare `Bearer`.
    static func bearer(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: " ")
    }
}
