import NativePostgres
import Outbox
import Testing
import TestSupport
@testable import UpServer

/// `PostgresUpIndex` beyond the contract: what two instances on one database (two indexes, two
/// pools) must agree on, decided by the database alone.
@Suite("PostgresUpIndex across instances")
struct PostgresUpIndexTests {
    /// Two fresh instances, the second on the first's database.
    private func twoInstances() async throws -> (PostgresUpIndex, PostgresUpIndex) {
        let one = try await postgresIndex(maxConnections: 4)
        return (one, try await postgresIndex(sharing: one, maxConnections: 4))
    }

    @Test func twoInstancesStartingTogetherMigrateOnce() async throws {
        let url = try await PostgresCluster.shared().createDatabase("upindex_start")
        let indexes = try (0..<3).map { _ in PostgresUpIndex(pool: PostgresPool(try PostgresConnectionString(url))) }
        let ran = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in indexes { group.addTask { try await index.migrate() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ran.sorted() == [0, 0, PostgresUpIndex.migrations.count])
        for index in indexes { index.pool.close() }
    }

    @Test func ofManyInsertOnlyPutsOfOneKeyOnTwoInstancesExactlyOneWins() async throws {
        let (one, two) = try await twoInstances()
        for round in 0..<5 {
            let key = "race-\(round)"
            let outcomes = await withTaskGroup(of: String.self) { group in
                for attempt in 0..<8 {
                    let index = attempt.isMultiple(of: 2) ? one : two
                    group.addTask {
                        do {
                            let outcome = try await index.putObject(
                                object(key, [.random()], etag: "F\(attempt)"), mode: .insertOnly, completion: nil,
                                callback: callback(key: key))
                            if case .stored = outcome { return "stored" }
                            return "other"
                        } catch UpIndexError.objectExists {
                            return "exists"
                        } catch {
                            return "error: \(error)"
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "stored" }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == "exists" }.count == 7, "\(outcomes)")
            #expect(try await two.object(bucket: "photos", key: key)?.version == 1)
        }
        #expect(try await one.callbackOutbox.depth() == 5)  // one callback per winner, none for a loser
    }

    @Test func aRepeatedMkfileOnAnotherInstanceGetsTheFirstAnswer() async throws {
        let (one, two) = try await twoInstances()
        let key = CompletionKey.mkfile(bucket: "photos", key: "k", fsize: 10, contexts: ["c1"])
        let blob = BlobID.random()
        let outcomes = try await withThrowingTaskGroup(of: PutObjectOutcome.self) { group in
            for attempt in 0..<6 {
                let index = attempt.isMultiple(of: 2) ? one : two
                group.addTask {
                    try await index.putObject(
                        object("k", [blob]), mode: .replace, completion: NewCompletion(key: key, expiresAt: 900),
                        callback: callback(key: "k"))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let stored = outcomes.filter { if case .stored = $0 { true } else { false } }
        #expect(stored.count == 1)
        #expect(try await one.object(bucket: "photos", key: "k")?.version == 1)
        #expect(try await two.callbackOutbox.depth() == 1)
        #expect(try await one.recordCompletionResult(key, result: #"{"first":1}"#) == #"{"first":1}"#)
        #expect(try await two.recordCompletionResult(key, result: #"{"second":1}"#) == #"{"first":1}"#)
    }

    @Test func aChunkAdvancesABlockOnceWhicheverInstanceGetsIt() async throws {
        let (one, two) = try await twoInstances()
        let blob = BlobID.random()
        _ = try await one.createBlock(blob, blockSize: 100, expiresAt: 500, createdAt: 1)
        async let a = one.advanceBlock(blob, from: 0, to: 10, crc32: 1, sha1: nil)
        async let b = two.advanceBlock(blob, from: 0, to: 20, crc32: 2, sha1: nil)
        let (first, second) = try await (a, b)
        #expect([first, second].filter { $0 }.count == 1)
        let offset = try await two.block(blob)?.offset
        #expect(offset == (first ? 10 : 20))
    }

    @Test func twoInstancesCompletingOneUploadAssembleItOnce() async throws {
        let (one, two) = try await twoInstances()
        let upload = try await one.createUpload(bucket: "photos", key: "m", expiresAt: 900, createdAt: 100)
        let blob = BlobID.random()
        let part = UploadPart(
            uploadID: upload.id, partNumber: 1, blob: blob, size: 10, md5: "m", etag: "e1", digest: [1], putTime: 100)
        _ = try await two.putPart(part, now: 100)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in [one, two, one, two] {
                group.addTask {
                    (try? await index.completeUpload(
                        upload.id, parts: [PartReference(partNumber: 1, etag: "e1")], object: object("m", [blob]),
                        mode: .replace, completion: nil, callback: callback(key: "m"), now: 200)) != nil
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 1)
        #expect(try await one.upload(id: upload.id)?.state == .completed)
        #expect(try await two.callbackOutbox.depth() == 1)
    }

    @Test func eachInstanceClaimsADifferentCallback() async throws {
        let (one, two) = try await twoInstances()
        for index in 0..<30 { _ = try await one.callbackOutbox.enqueue(callback(key: "k\(index)"), now: 100) }
        async let a = Self.drain(one.callbackOutbox, owner: "one")
        async let b = Self.drain(two.callbackOutbox, owner: "two")
        let (first, second) = try await (a, b)
        #expect(Set(first).isDisjoint(with: second))
        #expect(Set(first + second).count == 30)
    }

    @Test func crossedCopiesOnTwoInstancesTakeTurnsAndLoseNoBlob() async throws {
        let (one, two) = try await twoInstances()
        let (a, b) = (ObjectName(bucket: "photos", key: "a"), ObjectName(bucket: "photos", key: "b"))
        let blobs = [BlobID.random(), BlobID.random()]
        _ = try await one.putObject(object("a", [blobs[0]]), mode: .replace, completion: nil, callback: nil)
        _ = try await one.putObject(object("b", [blobs[1]]), mode: .replace, completion: nil, callback: nil)
        // a→b and b→a at once, forced: both lock both names, in one order, so neither deadlocks.
        for _ in 0..<10 {
            async let forth = one.copyObject(from: a, to: b, mode: .replace, putTime: nil, removeSource: false)
            async let back = two.copyObject(from: b, to: a, mode: .replace, putTime: nil, removeSource: false)
            _ = try await (forth, back)
        }
        let left = try await one.knownBlobs()
        #expect(!left.isEmpty && left.isSubset(of: Set(blobs)))
        // Whichever copy ran last, both names now hold the same bytes.
        let copied = try await two.object(bucket: "photos", key: "a")?.segments
        #expect(copied == (try await one.object(bucket: "photos", key: "b"))?.segments)
    }

    static func drain(_ outbox: any OutboxStore, owner: String) async throws -> [Int64] {
        var ids: [Int64] = []
        for _ in 0..<60 {
            let claimed = try await outbox.claimDue(owner: owner, now: 100, limit: 1)
            if claimed.isEmpty { break }
            ids += claimed.map(\.id)
        }
        return ids
    }
}
