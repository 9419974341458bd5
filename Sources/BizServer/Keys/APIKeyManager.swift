/// Creating, listing and revoking API keys: the rules shared by `biz-server keys …` and
/// `/v1/admin/keys`, so the two cannot disagree. Errors are rows of the one `BizError` table
/// (the CLI turns their status into an exit code).
public struct APIKeyManager: Sendable {
    /// Longest key name, UTF-8 bytes.
    static let maxNameBytes = 128

    private let store: (any APIKeyStore)?
    private let clients: [BizServerConfiguration.Client]

    /// Manages the keys in `store` for the configured `clients`; without a store only the
    /// configured keys exist and creating one is a 503.
    public init(store: (any APIKeyStore)?, clients: [BizServerConfiguration.Client]) {
        self.store = store
        self.clients = clients
    }

    /// Creates a key for client `clientID` at `now` (Unix seconds, with their fraction).
    ///
    /// - Parameters:
    ///   - name: A label, at most 128 bytes without control characters.
    ///   - expires: A ``KeyLifetime`` (`"90d"`); nil: never expires.
    /// - Throws: `BizError` 400 for an unknown client, a bad name or lifetime; 503 when the store fails.
    public func create(client clientID: String, name: String?, expires: String?, now: Double) async throws(BizError) -> CreatedAPIKey {
        let createdAt = Int64(now.rounded(.down))
        guard clients.contains(where: { $0.id == clientID }) else {
            throw .invalidRequest("unknown client '\(clientID)' (not in the configuration's clients)")
        }
        let name = name ?? ""
        guard name.utf8.count <= Self.maxNameBytes, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidRequest("name must be at most \(Self.maxNameBytes) bytes without control characters")
        }
        var expiresAt: Int64?
        if let expires {
            guard let lifetime = KeyLifetime.seconds(expires) else {
                throw .invalidRequest("expires must be \(KeyLifetime.help)")
            }
            expiresAt = createdAt + lifetime
        }
        guard let store else { throw BizError.keyStoreUnavailable.with(detail: "this server was built without a key store") }
        let issued = IssuedAPIKey.generate(milliseconds: Int64((now * 1000).rounded(.down)))
        let stored = StoredAPIKey(
            id: issued.id, clientID: clientID, name: name, keySHA256: issued.sha256, createdAt: createdAt, expiresAt: expiresAt)
        try await Self.using { try await store.insert(stored) }
        return CreatedAPIKey(stored: stored, key: issued.key)
    }

    /// The configured keys (first, in `clients[]` order), then the stored ones, oldest first;
    /// only client `clientID`'s when given.
    public func list(client clientID: String? = nil, now: Int64) async throws(BizError) -> [APIKeyListing] {
        let configured = clients.filter { !$0.apiKeySHA256.isEmpty }.map { APIKeyListing(configuredFor: $0.id) }
        var stored: [APIKeyListing] = []
        if let store {
            stored = try await Self.using { try await store.keys() }.map { APIKeyListing($0, now: now) }
        }
        return (configured + stored).filter { clientID == nil || $0.clientID == clientID }
    }

    /// Revokes stored key `id` at `now`; revoking a revoked key again changes nothing.
    ///
    /// - Throws: `BizError` 404 for an unknown id, 409 for a configured key, 503 when the store fails.
    public func revoke(id: String, now: Int64) async throws(BizError) -> APIKeyListing {
        if let client = clients.first(where: { !$0.apiKeySHA256.isEmpty && APIKeyListing.configurationID($0.id) == id }) {
            throw BizError.keyReadOnly.with(detail: "client \(client.id)")
        }
        guard let store, let key = try await Self.using({ try await store.revoke(id: id, at: now) }) else {
            throw .keyNotFound
        }
        return APIKeyListing(key, now: now)
    }

    /// Runs a store call; its failure is a 503 with the cause for the log.
    private static func using<T>(_ call: () async throws -> T) async throws(BizError) -> T {
        do {
            return try await call()
        } catch {
            throw BizError.keyStoreUnavailable.with(detail: "\(error)")
        }
    }
}
