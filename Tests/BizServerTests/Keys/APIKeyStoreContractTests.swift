import BizServer
import Foundation
import TestSupport
import Testing

/// Which key store a contract test runs against; every behaviour must hold for each.
enum KeyStoreKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case inMemory
    case postgres

    var testDescription: String { rawValue }

    func make(_ file: TemporaryFile) async throws -> any APIKeyStore {
        switch self {
        case .sqlite: try SQLiteAPIKeyStore(path: file.path)
        case .inMemory: InMemoryAPIKeyStore()
        case .postgres: try await postgresBizDatabase().keys
        }
    }
}

func storedKey(
    _ id: String, client: String = "demo", hash: String? = nil, createdAt: Int64 = 1_000, expiresAt: Int64? = nil
) -> StoredAPIKey {
    StoredAPIKey(
        id: id, clientID: client, name: "n-\(id)", keySHA256: hash ?? BizServerConfiguration.apiKeyHash("secret-\(id)"),
        createdAt: createdAt, expiresAt: expiresAt)
}

/// The behaviour every `APIKeyStore` shares (`APIKeyStore`'s documentation is the contract).
@Suite struct APIKeyStoreContractTests {
    @Test(arguments: KeyStoreKind.allCases)
    func storesKeysOldestFirstAndCountsEveryChange(kind: KeyStoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        #expect(try await store.keys() == [])
        let start = try await store.version()
        let b = storedKey("key_b", createdAt: 2_000, expiresAt: 9_000)
        let a = storedKey("key_a", client: "other", createdAt: 2_000)
        let first = storedKey("key_z", createdAt: 1_000)
        for key in [b, a, first] { try await store.insert(key) }
        #expect(try await store.keys() == [first, a, b])  // by createdAt, then id
        #expect(try await store.version() == start + 3)
    }

    @Test(arguments: KeyStoreKind.allCases)
    func refusesADuplicateIdOrHashAndChangesNothing(kind: KeyStoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let key = storedKey("key_1")
        try await store.insert(key)
        let version = try await store.version()
        await #expect(throws: (any Error).self) { try await store.insert(storedKey("key_1", hash: BizServerConfiguration.apiKeyHash("x"))) }
        await #expect(throws: (any Error).self) { try await store.insert(storedKey("key_2", hash: key.keySHA256)) }
        #expect(try await store.keys() == [key])
        #expect(try await store.version() == version)
    }

    @Test(arguments: KeyStoreKind.allCases)
    func revokesOnceAndKeepsTheFirstTime(kind: KeyStoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        try await store.insert(storedKey("key_1"))
        try await store.insert(storedKey("key_2"))
        let version = try await store.version()
        let revoked = try #require(try await store.revoke(id: "key_1", at: 5_000))
        #expect(revoked.revokedAt == 5_000)
        #expect(revoked.id == "key_1" && revoked.name == "n-key_1")
        #expect(try await store.version() == version + 1)
        let again = try await store.revoke(id: "key_1", at: 6_000)
        #expect(again?.revokedAt == 5_000)
        #expect(try await store.version() == version + 1)  // nothing changed
        #expect(try await store.keys().map(\.revokedAt) == [5_000, nil])
        #expect(try await store.revoke(id: "key_404", at: 7_000) == nil)
        #expect(try await store.revoke(id: "KEY_1", at: 7_000) == nil)  // ids are exact
        #expect(try await store.version() == version + 1)
    }

    @Test(arguments: KeyStoreKind.allCases)
    func keepsEveryField(kind: KeyStoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let key = StoredAPIKey(
            id: "key_ü", clientID: "démo", name: "CI ✓", keySHA256: BizServerConfiguration.apiKeyHash("k"),
            createdAt: -5, expiresAt: Int64.max, revokedAt: nil)
        try await store.insert(key)
        #expect(try await store.keys() == [key])
    }

    /// Two connections to one file stand for the server and `biz-server keys` in another process:
    /// each sees the other's committed changes, and the version tells it something changed.
    @Test func twoConnectionsToOneFileSeeEachOthersChanges() async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let server = try SQLiteAPIKeyStore(path: file.path)
        let command = try SQLiteAPIKeyStore(path: file.path)
        let before = try await server.version()
        try await command.insert(storedKey("key_cli"))
        #expect(try await server.version() == before + 1)
        #expect(try await server.keys().map(\.id) == ["key_cli"])
        _ = try await server.revoke(id: "key_cli", at: 3)
        #expect(try await command.keys().first?.revokedAt == 3)
        #expect(try await command.version() == before + 2)
    }

    @Test func aReopenedStoreHasItsKeys() async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        try await SQLiteAPIKeyStore(path: file.path).insert(storedKey("key_1"))
        let reopened = try SQLiteAPIKeyStore(path: file.path)
        #expect(try await reopened.keys().map(\.id) == ["key_1"])
        #expect(try await reopened.version() == 1)
    }
}
