/// Where API keys issued by `biz-server keys create` and `POST /v1/admin/keys` are kept.
///
/// A small role with two implementations that pass one contract suite: `SQLiteAPIKeyStore`
/// (production; several processes on one file) and `InMemoryAPIKeyStore` (TestSupport). The
/// operations map to portable SQL (no rowids, no upserts), so a PostgreSQL store can follow.
///
/// Servers do not reload every key on every request: they read ``version()`` a few times a
/// second and reload only when it changed. The version is a counter row written in the same
/// transaction as the change, so it works the same across processes and, later, across servers
/// sharing one database.
public protocol APIKeyStore: Sendable {
    /// Adds `key`.
    ///
    /// - Throws: When a key with the same id or the same hash is stored already (nothing changes).
    func insert(_ key: StoredAPIKey) async throws

    /// Every stored key, revoked and expired ones included, oldest first (by `createdAt`, then id).
    func keys() async throws -> [StoredAPIKey]

    /// Marks key `id` revoked at `time` (Unix seconds) unless it is already; returns the key as
    /// stored afterwards (a second revocation keeps the first time), or nil when there is none.
    func revoke(id: String, at time: Int64) async throws -> StoredAPIKey?

    /// A number that grows with every change made by ``insert(_:)`` or ``revoke(id:at:)``, by any
    /// process using the store; a revocation of an already revoked key changes nothing.
    func version() async throws -> Int64
}
