public import NativePostgres

/// ``APIKeyStore`` on PostgreSQL (`api_keys` and `api_key_changes` of ``PostgresBizDatabase``):
/// a key created or revoked through any instance bumps the shared version in the same
/// transaction, so every instance's `LiveAPIKeys` poller sees it within a poll.
public struct PostgresAPIKeyStore: APIKeyStore {
    private let pool: PostgresPool

    /// The store in the (migrated) database behind `pool`.
    public init(pool: PostgresPool) { self.pool = pool }

    private static let columns = "id, client_id, name, key_sha256, created_at, expires_at, revoked_at"

    /// See ``APIKeyStore/insert(_:)``.
    public func insert(_ key: StoredAPIKey) async throws {
        try await pool.transaction { connection in
            try Self.insert(key, on: connection)
            try connection.query("UPDATE api_key_changes SET version = version + 1 WHERE singleton = 1")
        }
    }

    /// Inserts `key` on `connection` without bumping the version (the caller does, once).
    static func insert(_ key: StoredAPIKey, on connection: PostgresConnection) throws {
        try connection.query(
            "INSERT INTO api_keys (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
                .text(key.id), .text(key.clientID), .text(key.name), .text(key.keySHA256), .integer(key.createdAt),
                PostgresValue(key.expiresAt), PostgresValue(key.revokedAt),
            ])
    }

    /// See ``APIKeyStore/keys()``.
    public func keys() async throws -> [StoredAPIKey] {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM api_keys ORDER BY created_at, id").rows.map(Self.key(from:))
        }
    }

    /// See ``APIKeyStore/revoke(id:at:)``.
    public func revoke(id: String, at time: Int64) async throws -> StoredAPIKey? {
        try await pool.transaction { connection in
            let changed = try connection.query(
                "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [.integer(time), .text(id)]
            ).rowsAffected
            if changed == 1 { try connection.query("UPDATE api_key_changes SET version = version + 1 WHERE singleton = 1") }
            return try connection.query("SELECT \(Self.columns) FROM api_keys WHERE id = $1", [.text(id)])
                .first.map(Self.key(from:))
        }
    }

    /// See ``APIKeyStore/version()``.
    public func version() async throws -> Int64 {
        try await pool.withConnection { connection in
            guard let row = try connection.query("SELECT version FROM api_key_changes WHERE singleton = 1").first else {
                throw PostgresError(.other, message: "api_key_changes has no row: the database is not migrated")
            }
            return try row.decode(0)
        }
    }

    private static func key(from row: PostgresRow) throws -> StoredAPIKey {
        StoredAPIKey(
            id: try row.decode(0), clientID: try row.decode(1), name: try row.decode(2), keySHA256: try row.decode(3),
            createdAt: try row.decode(4), expiresAt: try row.decode(5), revokedAt: try row.decode(6))
    }
}
