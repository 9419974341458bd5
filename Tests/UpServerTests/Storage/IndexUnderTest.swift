import Foundation
import NativeCrypto
import NativePostgres
import Outbox
import Testing
import TestSupport
@testable import UpServer

/// Every index role at once, and the callback outbox in the same database: what the contract
/// suites drive (each suite only calls its own role's methods, plus the outbox to look).
protocol IndexUnderTest: BlockIndex, MultipartIndex, ObjectIndex, ObjectCatalog, SweepIndex {
    /// The callback outbox the objects' callbacks are written to.
    var callbackOutbox: any OutboxStore { get }
}

extension SQLiteUpIndex: IndexUnderTest {
    var callbackOutbox: any OutboxStore { outbox }
}

extension InMemoryUpIndex: IndexUnderTest {
    nonisolated var callbackOutbox: any OutboxStore { outbox }
}

extension PostgresUpIndex: IndexUnderTest {
    var callbackOutbox: any OutboxStore { outbox }
}

/// Which implementation a contract test runs against; every behaviour must hold for each.
enum IndexKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case inMemory
    case postgres

    var testDescription: String { rawValue }

    func make(_ directory: TemporaryDirectory) async throws -> any IndexUnderTest {
        switch self {
        case .sqlite: try SQLiteUpIndex(dataDirectory: directory.url)
        case .inMemory: InMemoryUpIndex()
        case .postgres: try await postgresIndex()
        }
    }
}

/// A migrated `PostgresUpIndex` on a fresh database of the test process's shared cluster; a
/// second index on the same database (another instance, with its own pool) with `sharing`.
func postgresIndex(sharing other: PostgresUpIndex? = nil, maxConnections: Int = 2) async throws -> PostgresUpIndex {
    let connectionString: PostgresConnectionString
    if let other {
        connectionString = other.pool.connectionString
    } else {
        connectionString = try PostgresConnectionString(try await PostgresCluster.shared().createDatabase("upindex"))
    }
    let index = PostgresUpIndex(
        pool: PostgresPool(connectionString, configuration: .init(maxConnections: maxConnections)))
    try await index.migrate()
    return index
}

func object(_ key: String, _ blobs: [BlobID], bucket: String = "photos", etag: String = "Fetag") -> StoredObject {
    StoredObject(
        bucket: bucket, key: key, etag: etag, fsize: Int64(blobs.count) * 10, mimeType: "image/jpeg",
        segments: blobs.map { Segment(blob: $0, length: 10) }, metadata: ["x-qn-meta-color": "red"], putTime: 1000,
        deleteAfterDays: 7, fileType: 1)
}

/// The callback of an object, as the committer enqueues it (born claimed when `owner` is given).
func callback(
    key: String = "a.jpg", urls: [String] = ["http://biz.local/cb"], lease: Int64 = 10, owner: String? = nil
) -> OutboxMessage {
    let request = CallbackRequest(
        urls: urls, host: "biz.local", body: "key=\(key)", contentType: "application/x-www-form-urlencoded",
        authScheme: "QBox")
    return OutboxMessage(
        payload: CallbackMessage(bucket: "photos", key: key, etag: "Fetag", request: request).encoded(),
        leaseSeconds: lease, claimedBy: owner)
}
