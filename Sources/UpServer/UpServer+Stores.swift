import Basics
import Foundation
import NativePostgres
import ObjectStorage

extension UpServer {
    /// The stores `configuration` names: the PostgreSQL index when `database` is set, else SQLite
    /// in `directory`; the S3 blob store when `blobStore` is S3, else files in `directory`.
    /// Nothing is contacted yet: `UpStores.prepare` (run by ``prepare()`` before listening)
    /// migrates the database and checks the bucket.
    static func openStores(configuration: UpServerConfiguration, directory: URL, logger: Logger) throws -> UpStores {
        let blobs: any BlockStore
        var checks: [@Sendable () async throws -> Void] = []
        switch configuration.blobStore {
        case .disk:
            let store = try FileBlockStore(dataDirectory: directory)
            // Scratch files an earlier version's crash left (downloads stream now).
            try? FileManager.default.removeItem(at: store.scratchDirectory)
            blobs = store
        case .s3(let settings):
            let store = S3BlockStore(client: try S3Client(settings: settings, transport: try S3BlockStore.transport()))
            checks.append { try await store.checkBucket() }
            blobs = store
            logger.info("blob store", ["store": .string(configuration.blobStore.summary)])
        }
        var stores: UpStores
        if let connectionString = try configuration.databaseConnectionString() {
            let index = PostgresUpIndex(pool: PostgresPool(connectionString))
            checks.insert({ try await index.migrate() }, at: 0)
            stores = UpStores(blobs: blobs, index: index, outbox: index.outbox)
            logger.info("index", ["database": .string(connectionString.description)])
        } else {
            let index = try SQLiteUpIndex(dataDirectory: directory)
            stores = UpStores(blobs: blobs, index: index, outbox: index.outbox)
        }
        let all = checks
        stores.prepare = { for check in all { try await check() } }
        return stores
    }

    /// Migrates the PostgreSQL index and checks the S3 bucket, if configured, before the server
    /// listens: an unreachable database or store at start is exit 1 with its reason.
    public func prepare() async throws {
        try await stores.prepare()
    }
}
