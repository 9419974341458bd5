import BizServer
import Foundation
import NativeStore  // SQLiteDatabase.Synchronous, re-exported through SQLiteUploadRecordStore.init
import TestSupport
import Testing

/// Which implementation a behavioural test runs against; every behaviour must hold for each.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case inMemory
    case postgres

    var testDescription: String { rawValue }

    func make(_ file: TemporaryFile) async throws -> any UploadRecordStore {
        switch self {
        case .sqlite: try SQLiteUploadRecordStore(path: file.path)
        case .inMemory: InMemoryUploadRecordStore()
        case .postgres: try await postgresBizDatabase().records
        }
    }
}

/// A unique database path; `remove()` deletes it and its WAL files.
struct TemporaryFile {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("upload-records-\(UUID().uuidString).sqlite").path

    func remove() {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}

func upload(
    client: String = "client-a",
    bucket: String = "photos",
    key: String = "a.jpg",
    hash: String = "FtaXA-hash",
    fsize: Int64 = 1024
) -> NewUploadRecord {
    NewUploadRecord(
        clientID: client, bucket: bucket, key: key, hash: hash, fsize: fsize, mimeType: "image/jpeg",
        fname: "a.jpg", endUser: "user-7", traceID: "trace-1", vars: ["x:album": "summer"]
    )
}

@Suite struct UploadRecordStoreTests {
    @Test(arguments: StoreKind.allCases)
    func recordsANewUpload(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let new = upload()
        let (record, created) = try await store.record(new, receivedAt: 1_700_000_000_123)
        #expect(created)
        #expect(UploadRecordIDGenerator.isWellFormed(record.id))
        #expect(UploadRecordIDGenerator.milliseconds(of: record.id) == 1_700_000_000_123)
        #expect(record == UploadRecord(id: record.id, upload: new, receivedAt: 1_700_000_000_123))
        #expect(try await store.upload(id: record.id) == record)
        #expect(try await store.count() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func redeliveryReturnsTheFirstRecord(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let first = try await store.record(upload(), receivedAt: 1000)
        // A redelivery later, even with other incidental fields, is the same object.
        var again = upload()
        again.traceID = "trace-2"
        let second = try await store.record(again, receivedAt: 9000)
        #expect(!second.created)
        #expect(second.record == first.record)
        #expect(second.record.receivedAt == 1000)
        #expect(try await store.count() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func sameKeyWithAnotherHashIsANewVersion(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let v1 = try await store.record(upload(hash: "hash-1"), receivedAt: 1000)
        let v2 = try await store.record(upload(hash: "hash-2"), receivedAt: 1000)
        #expect(v2.created)
        #expect(v1.record.id != v2.record.id)
        #expect(v1.record.id < v2.record.id)  // same millisecond, still ordered
        // Same key and hash in another bucket is another object too.
        #expect(try await store.record(upload(bucket: "other", hash: "hash-1"), receivedAt: 1000).created)
        #expect(try await store.count() == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentDuplicateDeliveriesCreateOneRecord(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let results = try await withThrowingTaskGroup(of: (record: UploadRecord, created: Bool).self) { group in
            for attempt in 0..<50 {
                group.addTask { try await store.record(upload(), receivedAt: 5000 + Int64(attempt)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        #expect(results.filter(\.created).count == 1)
        #expect(Set(results.map(\.record.id)).count == 1)
        #expect(Set(results.map(\.record.receivedAt)).count == 1)
        #expect(try await store.count() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func pagesNewestFirstPerClient(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        var aIDs: [String] = []
        var bIDs: [String] = []
        for index in 0..<8 {
            // Interleave clients; A gets indexes 0,1,3,4,6,7 and B gets 2,5.
            let client = index % 3 == 2 ? "client-b" : "client-a"
            let (record, _) = try await store.record(upload(client: client, key: "k\(index)"), receivedAt: 1000 + Int64(index))
            if client == "client-a" { aIDs.append(record.id) } else { bIDs.append(record.id) }
        }

        var pages: [[String]] = []
        var cursor: String?
        repeat {
            let page = try await store.uploads(clientID: "client-a", limit: 4, after: cursor)
            #expect(page.allSatisfy { $0.clientID == "client-a" })
            pages.append(page.map(\.id))
            cursor = page.last?.id
        } while cursor != nil && pages.count < 10
        #expect(pages == [Array(aIDs.reversed().prefix(4)), Array(aIDs.reversed().dropFirst(4)), []])

        #expect(try await store.uploads(clientID: "client-b", limit: 10, after: nil).map(\.id) == bIDs.reversed())
        #expect(try await store.uploads(clientID: "client-c", limit: 10, after: nil).isEmpty)
        #expect(try await store.uploads(clientID: "client-a", limit: 0, after: nil).isEmpty)
        // Another client's cursor, or an unknown one, reveals nothing.
        #expect(try await store.uploads(clientID: "client-b", limit: 10, after: aIDs.last).isEmpty)
        #expect(try await store.uploads(clientID: "client-a", limit: 10, after: "up_nope").isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func anUnknownOrForeignCursorIsNilNotAnEmptyPage(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        let a = try await store.record(upload(client: "client-a", key: "a"), receivedAt: 1000).record
        let b = try await store.record(upload(client: "client-b", key: "b"), receivedAt: 1001).record
        #expect(try await store.uploads(UploadQuery(clientID: "client-a", limit: 10, after: a.id)) == [])
        #expect(try await store.uploads(UploadQuery(clientID: "client-a", limit: 10, after: b.id)) == nil)
        #expect(try await store.uploads(UploadQuery(clientID: "client-a", limit: 10, after: "up_nope")) == nil)
        #expect(try await store.uploads(UploadQuery(clientID: "client-a", limit: 10)) == [a])
    }

    @Test(arguments: StoreKind.allCases)
    func filtersByKeyTraceAndEndUserExactlyWithTheCursor(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        var records: [UploadRecord] = []
        for index in 0..<9 {
            var new = upload(key: index % 3 == 0 ? "k/shared" : "k/\(index)", hash: "h\(index)")
            new.endUser = index % 2 == 0 ? "even" : "odd"
            new.traceID = "trace-\(index % 4)"
            records.append(try await store.record(new, receivedAt: 1000 + Int64(index)).record)
        }
        _ = try await store.record(upload(client: "client-b", key: "k/shared", hash: "hb"), receivedAt: 2000)
        func ids(_ query: UploadQuery) async throws -> [Int]? {
            try await store.uploads(query)?.map { record in records.firstIndex(of: record) ?? -1 }
        }
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, key: "k/shared")) == [6, 3, 0])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, key: "k/")) == [])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, key: "K/SHARED")) == [])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, endUser: "odd")) == [7, 5, 3, 1])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, traceID: "trace-1")) == [5, 1])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, key: "k/shared", endUser: "even")) == [6, 0])
        // Filters combine with the cursor and the limit: the cursor need not match the filter.
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 1, after: records[6].id, endUser: "odd")) == [5])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 10, after: records[7].id, key: "k/shared")) == [6, 3, 0])
        #expect(try await ids(UploadQuery(clientID: "client-a", limit: 0, endUser: "odd")) == [])
    }

    @Test(arguments: StoreKind.allCases)
    func uploadSizesAreOneUsersSinceATimeOldestFirst(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        for (index, (user, client, at)) in [("u", "client-a", 3000), ("u", "client-a", 1000), ("v", "client-a", 2000),
                                            ("u", "client-b", 2500), ("u", "client-a", 500)].enumerated() {
            var new = upload(client: client, key: "k\(index)", fsize: Int64(10 * (index + 1)))
            new.endUser = user
            _ = try await store.record(new, receivedAt: Int64(at))
        }
        let sizes = try await store.uploadSizes(clientID: "client-a", endUser: "u", since: 1000)
        #expect(sizes == [UploadSize(receivedAt: 1000, fsize: 20), UploadSize(receivedAt: 3000, fsize: 10)])
        #expect(try await store.uploadSizes(clientID: "client-a", endUser: "U", since: 0).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func clientsAreComparedByBytes(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        _ = try await store.record(upload(client: "caf\u{E9}"), receivedAt: 1000)
        #expect(try await store.uploads(clientID: "cafe\u{301}", limit: 10, after: nil).isEmpty)
        #expect(try await store.uploads(clientID: "caf\u{E9}", limit: 10, after: nil).count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func unknownIDIsNil(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        _ = try await store.record(upload(), receivedAt: 1000)
        #expect(try await store.upload(id: "up_00000000000000000000000000") == nil)
        #expect(try await store.upload(id: "") == nil)
    }

    static let awkwardKeys = [
        "路径/文件 🚀.txt", "../../etc/passwd", "a:b:c", "C:\\windows\\x", " leading and trailing ",
        "quote'\"; DROP TABLE upload_records; --", "e\u{301}", "é",  // NFD and NFC: distinct keys
    ]

    @Test(arguments: StoreKind.allCases)
    func storesKeysAndVarsVerbatim(kind: StoreKind) async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try await kind.make(file)
        for (index, key) in Self.awkwardKeys.enumerated() {
            var new = upload(key: key)
            new.fname = key
            new.vars = ["x:name": key, "x:emoji": "🚀", "x:slash": "a/b\\c", "x:empty": ""]
            let (record, created) = try await store.record(new, receivedAt: 1000 + Int64(index))
            #expect(created)
            let fetched = try #require(try await store.upload(id: record.id))
            #expect(fetched.key == key)
            #expect(fetched.fname == key)
            #expect(fetched.vars == new.vars)
        }
        #expect(try await store.count() == Self.awkwardKeys.count)
    }
}

@Suite struct SQLiteUploadRecordStoreTests {
    @Test func survivesReopening() async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let first: UploadRecord
        do {
            let store = try SQLiteUploadRecordStore(path: file.path)
            first = try await store.record(upload(), receivedAt: 1000).record
        }
        let reopened = try SQLiteUploadRecordStore(path: file.path)
        #expect(try await reopened.upload(id: first.id) == first)
        #expect(try await reopened.count() == 1)
        // Idempotency holds across restarts too.
        let again = try await reopened.record(upload(), receivedAt: 2000)
        #expect(!again.created)
        #expect(again.record == first)
    }

    @Test func usesWriteAheadLogging() async throws {
        let file = TemporaryFile()
        defer { file.remove() }
        let store = try SQLiteUploadRecordStore(path: file.path, synchronous: .normal)
        #expect(try await store.journalMode() == "wal")
    }

    @Test func opensInMemory() async throws {
        let store = try SQLiteUploadRecordStore(path: ":memory:")
        #expect(try await store.record(upload(), receivedAt: 1).created)
        #expect(try await store.count() == 1)
    }
}
