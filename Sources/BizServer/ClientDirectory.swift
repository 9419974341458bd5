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
        /// Whom the client's own tokens are for (its resolved key prefix and `endUser`): made
        /// with the caller, so a configured key's is made once, not per token.
        let subject: TokenSubject

        init(client: BizServerConfiguration.Client, keyID: String) {
            self.client = client
            self.keyID = keyID
            subject = TokenSubject(client)
        }
    }

    /// The configured keys, by digest; their `Caller`s are made once here, not per request.
    private let callersByKeyDigest: [APIKeyDigest: Caller]
    private let clientsByID: [String: BizServerConfiguration.Client]
    private let stored: LiveAPIKeys?
    private let clock: any WallClock

    /// A directory of `clients`' configured keys and, when given, the `stored` ones (whose
    /// expiry is checked against `clock`).
    init(_ clients: [BizServerConfiguration.Client], stored: LiveAPIKeys? = nil, clock: any WallClock = SystemClock()) {
        var index: [APIKeyDigest: Caller] = [:]
        for client in clients {
            guard let digest = APIKeyDigest(hex: client.apiKeySHA256) else { continue }
            index[digest] = Caller(client: client, keyID: APIKeyListing.configurationID(client.id))
        }
        callersByKeyDigest = index
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
        let digest = APIKeyDigest(of: key)
        if let caller = callersByKeyDigest[digest] { return caller }
        guard let entry = stored?.lookup(hash: digest.hex), let client = clientsByID[entry.clientID] else {
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
        // Every request carries one: ASCII headers are cut by bytes (the same answer as the
        // Character-wise code below, which a combining mark after a space can change), read in
        // place as a Span, with only the credential copied out.
        let utf8 = authorization.utf8
        let bytes = utf8.span
        var index = 0
        while index < bytes.count {
            if bytes[index] >= 0x80 { return characterBearer(authorization) }
            index += 1
        }
        let space = UInt8(ascii: " ")
        var start = 0
        while start < bytes.count && bytes[start] == space { start += 1 }
        var schemeEnd = start
        while schemeEnd < bytes.count && bytes[schemeEnd] != space { schemeEnd += 1 }
        // Scheme, one space, then something (a bare "Bearer " has no credential part at all).
        guard schemeEnd + 1 < bytes.count, schemeEnd - start == 6 else { return nil }
        var offset = start
        for letter in "bearer".utf8 {
            guard bytes[offset] | 0x20 == letter else { return nil }
            offset += 1
        }
        var lower = schemeEnd + 1
        var upper = bytes.count
        while lower < upper && bytes[lower] == space { lower += 1 }
        while upper > lower && bytes[upper - 1] == space { upper -= 1 }
        let from = utf8.index(utf8.startIndex, offsetBy: lower), to = utf8.index(utf8.startIndex, offsetBy: upper)
        return String(decoding: utf8[from..<to], as: UTF8.self)
    }

    private static func characterBearer(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: " ")
    }
}
