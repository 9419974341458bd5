/// An API key kept in the key store (``APIKeyStore``): whose it is and when it stops working —
/// never the key itself, only its SHA-256 (DESIGN.md, "Secrets").
public struct StoredAPIKey: Sendable, Equatable {
    /// Public id (`key_` and 24 hex digits, in creation order): what `keys list` shows and
    /// `keys revoke` takes.
    public var id: String
    /// The `clients[]` entry the key authenticates as.
    public var clientID: String
    /// A label for people (`"ci"`, `"mobile-2027"`); may be empty.
    public var name: String
    /// Lower-case hex SHA-256 of the key.
    public var keySHA256: String
    /// When it was created, Unix seconds.
    public var createdAt: Int64
    /// From this Unix second on it is refused; nil: never expires.
    public var expiresAt: Int64?
    /// When it was revoked, Unix seconds; nil while it is not.
    public var revokedAt: Int64?

    /// Creates a record.
    public init(
        id: String, clientID: String, name: String = "", keySHA256: String, createdAt: Int64, expiresAt: Int64? = nil,
        revokedAt: Int64? = nil
    ) {
        self.id = id
        self.clientID = clientID
        self.name = name
        self.keySHA256 = keySHA256
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    /// Whether a key can be used.
    public enum State: String, Sendable {
        /// It authenticates.
        case active
        /// Its `expiresAt` has come.
        case expired
        /// It was revoked (revocation wins over expiry).
        case revoked
    }

    /// The key's state at `now` (Unix seconds).
    public func state(at now: Int64) -> State {
        if revokedAt != nil { return .revoked }
        if let expiresAt, now >= expiresAt { return .expired }
        return .active
    }
}
