public import BizServer

/// An `APIKeyStore` in memory: the twin of `SQLiteAPIKeyStore` for handler tests; both pass
/// `APIKeyStoreContractTests`. An actor, so calls are serialized as the SQLite store's
/// transactions serialize them. Nothing survives the process.
public actor InMemoryAPIKeyStore: APIKeyStore {
    private var stored: [StoredAPIKey] = []
    private var changes: Int64 = 0
    /// When set, every call throws it (a store that cannot be read, for failure tests).
    private var failure: (any Error)?

    /// An empty store.
    public init() {}

    /// Makes every later call throw `error` (nil: work again).
    public func fail(with error: (any Error)?) { failure = error }

    /// See `APIKeyStore.insert(_:)`.
    public func insert(_ key: StoredAPIKey) throws {
        if let failure { throw failure }
        // Compared as UTF-8 bytes, as SQLite compares TEXT.
        guard !stored.contains(where: { Array($0.id.utf8) == Array(key.id.utf8) || $0.keySHA256 == key.keySHA256 }) else {
            throw Duplicate(id: key.id)
        }
        stored.append(key)
        changes += 1
    }

    /// See `APIKeyStore.keys()`.
    public func keys() throws -> [StoredAPIKey] {
        if let failure { throw failure }
        // As SQLite's ORDER BY created_at, id: TEXT compares as UTF-8 bytes.
        return stored.sorted { a, b in
            a.createdAt != b.createdAt ? a.createdAt < b.createdAt : Array(a.id.utf8).lexicographicallyPrecedes(Array(b.id.utf8))
        }
    }

    /// See `APIKeyStore.revoke(id:at:)`.
    public func revoke(id: String, at time: Int64) throws -> StoredAPIKey? {
        if let failure { throw failure }
        guard let index = stored.firstIndex(where: { Array($0.id.utf8) == Array(id.utf8) }) else { return nil }
        if stored[index].revokedAt == nil {
            stored[index].revokedAt = time
            changes += 1
        }
        return stored[index]
    }

    /// See `APIKeyStore.version()`.
    public func version() throws -> Int64 {
        if let failure { throw failure }
        return changes
    }

    /// A key with this id or hash is stored already.
    public struct Duplicate: Error, Equatable {
        /// The id inserted.
        public let id: String
    }
}
