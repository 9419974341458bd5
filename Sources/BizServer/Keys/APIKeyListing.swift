public import UpCore

/// One line of `biz-server keys list` and `GET /v1/admin/keys`: a stored key, or a key from the
/// configuration (the file's `apiKeySHA256` or `UPGATE_API_KEYS`), which is listed read-only —
/// it is changed where it is configured, not through the store. Never the key or its hash.
public struct APIKeyListing: Sendable, Equatable {
    /// Where a key comes from.
    public enum Source: String, Sendable {
        /// The key store (`keys create`, `POST /v1/admin/keys`): revocable.
        case store
        /// The configuration file or `UPGATE_API_KEYS`: read-only.
        case configuration
    }

    /// The key's id: a stored key's `key_…`, or `config:<client>` for a configured one.
    public var id: String
    /// Whose key it is.
    public var clientID: String
    /// The stored key's label (`""` for configured keys).
    public var name: String
    /// Where it comes from.
    public var source: Source
    /// Whether it works now.
    public var state: StoredAPIKey.State
    /// Unix seconds; nil for configured keys.
    public var createdAt: Int64?
    /// Unix seconds; nil: never expires.
    public var expiresAt: Int64?
    /// Unix seconds; nil unless revoked.
    public var revokedAt: Int64?

    /// Whether it can be revoked here.
    public var isReadOnly: Bool { source == .configuration }

    /// The id a configured key of `clientID` is listed under.
    static func configurationID(_ clientID: String) -> String { "config:" + clientID }

    /// The listing of a stored key at `now`.
    init(_ key: StoredAPIKey, now: Int64) {
        id = key.id
        clientID = key.clientID
        name = key.name
        source = .store
        state = key.state(at: now)
        createdAt = key.createdAt
        expiresAt = key.expiresAt
        revokedAt = key.revokedAt
    }

    /// The listing of client `clientID`'s configured key.
    init(configuredFor clientID: String) {
        id = Self.configurationID(clientID)
        self.clientID = clientID
        name = ""
        source = .configuration
        state = .active
    }

    /// The JSON object the API and `--json` print (documented as `KeyInfo` in the OpenAPI file).
    public var json: JSONValue {
        func time(_ value: Int64?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        return .object([
            ("id", .string(id)), ("client", .string(clientID)), ("name", .string(name)), ("source", .string(source.rawValue)),
            ("readOnly", .bool(isReadOnly)), ("state", .string(state.rawValue)), ("createdAt", time(createdAt)),
            ("expiresAt", time(expiresAt)), ("revokedAt", time(revokedAt)),
        ])
    }
}

/// A key just created: the only time the key itself is shown.
public struct CreatedAPIKey: Sendable, Equatable {
    /// The record as stored.
    public let stored: StoredAPIKey
    /// The key (`upk_…`).
    public let key: String

    /// `{"id", "key", "client", "name", "createdAt", "expiresAt"}` (`CreatedKey` in the OpenAPI file).
    public var json: JSONValue {
        .object([
            ("id", .string(stored.id)), ("key", .string(key)), ("client", .string(stored.clientID)),
            ("name", .string(stored.name)), ("createdAt", .int(stored.createdAt)),
            ("expiresAt", stored.expiresAt.map(JSONValue.int) ?? .null),
        ])
    }
}
