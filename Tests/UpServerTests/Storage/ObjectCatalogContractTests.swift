import Testing
@testable import UpServer

/// The `ObjectCatalog` contract and the lifecycle part of `SweepIndex`, for every implementation.
@Suite("ObjectCatalog contract")
struct ObjectCatalogContractTests {
    func put(_ index: any IndexUnderTest, _ key: String, _ blobs: [BlobID], bucket: String = "photos") async throws {
        _ = try await index.putObject(object(key, blobs, bucket: bucket), mode: .replace, completion: nil, callback: nil)
    }

    @Test(arguments: IndexKind.allCases)
    func listsInByteOrderWithinBounds(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        // "é" (U+00E9) sorts after "z" by bytes; "e\u{301}" is another key than "é".
        for key in ["b", "a/2", "a/1", "z", "é", "e\u{301}", "a"] { try await put(index, key, [BlobID.random()]) }
        try await put(index, "a/1", [BlobID.random()], bucket: "other")
        let all = try await index.listObjects(bucket: "photos", from: "", below: nil, limit: 100).map(\.key)
        #expect(all.map { Array($0.utf8) } == ["a", "a/1", "a/2", "b", "e\u{301}", "z", "é"].map { Array($0.utf8) })
        #expect(try await index.listObjects(bucket: "photos", from: "a/", below: "a0", limit: 100).map(\.key) == ["a/1", "a/2"])
        #expect(try await index.listObjects(bucket: "photos", from: "a/1\u{0}", below: nil, limit: 2).map(\.key) == ["a/2", "b"])
        let first = try #require(try await index.listObjects(bucket: "photos", from: "b", below: nil, limit: 1).first)
        #expect(first == (try await index.object(bucket: "photos", key: "b")))
    }

    @Test(arguments: IndexKind.allCases)
    func copiesShareBlobsAndReleaseOnlyWhatNothingNames(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let (a, b, c) = (BlobID.random(), BlobID.random(), BlobID.random())
        try await put(index, "src", [a, b])
        try await put(index, "taken", [c])
        let src = ObjectName(bucket: "photos", key: "src")
        let copy = ObjectName(bucket: "other", key: "copy")
        #expect(try await index.copyObject(from: src, to: copy, mode: .insertOnly, putTime: 5000, removeSource: false) == [])
        let copied = try #require(try await index.object(bucket: "other", key: "copy"))
        #expect(copied.segments.map(\.blob) == [a, b] && copied.putTime == 5000 && copied.etag == "Fetag")
        #expect(copied.metadata == ["x-qn-meta-color": "red"] && copied.deleteAfterDays == 7)
        let taken = ObjectName(bucket: "photos", key: "taken")
        await #expect(throws: UpIndexError.objectExists) {
            try await index.copyObject(from: src, to: taken, mode: .insertOnly, putTime: 1, removeSource: false)
        }
        await #expect(throws: UpIndexError.objectExists) {
            try await index.copyObject(from: src, to: src, mode: .insertOnly, putTime: nil, removeSource: true)
        }
        #expect(try await index.object(bucket: "photos", key: "taken")?.segments.map(\.blob) == [c])
        // Forced: the replaced object's blob is released.
        #expect(try await index.copyObject(from: src, to: taken, mode: .replace, putTime: 1, removeSource: false) == [c])
        // A move keeps putTime and removes the source; its blobs live on in the copies.
        let moved = ObjectName(bucket: "photos", key: "moved")
        #expect(try await index.copyObject(from: src, to: moved, mode: .insertOnly, putTime: nil, removeSource: true) == [])
        #expect(try await index.object(bucket: "photos", key: "src") == nil)
        #expect(try await index.object(bucket: "photos", key: "moved")?.putTime == 1000)
        #expect(try await index.copyObject(from: src, to: moved, mode: .replace, putTime: nil, removeSource: true) == nil)
        // Three objects name a and b: only the last delete frees them.
        #expect(try await index.deleteObject(bucket: "photos", key: "moved") == [])
        #expect(try await index.deleteObject(bucket: "other", key: "copy") == [])
        #expect(try await index.deleteObject(bucket: "photos", key: "taken") == [a, b].sorted())
        #expect(try await index.knownBlobs().isEmpty)
    }

    @Test(arguments: IndexKind.allCases)
    func changesAttributesButNotBytesOrVersion(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        try await put(index, "k", [BlobID.random()])
        let name = ObjectName(bucket: "photos", key: "k")
        let before = try #require(try await index.object(bucket: "photos", key: "k"))
        let changed = try await index.changeObject(
            name, .mimeAndMetadata(mimeType: "text/plain", metadata: ["x-qn-meta-size": "L", "x-qn-meta-color": "blue"]))
        #expect(changed?.mimeType == "text/plain")
        #expect(changed?.metadata == ["x-qn-meta-color": "blue", "x-qn-meta-size": "L"])
        _ = try await index.changeObject(name, .mimeAndMetadata(mimeType: nil, metadata: [:]))
        _ = try await index.changeObject(name, .deleteAfterDays(nil))
        let after = try #require(try await index.object(bucket: "photos", key: "k"))
        #expect(after.mimeType == "text/plain" && after.deleteAfterDays == nil && after.expiresAt == nil)
        #expect(after.segments == before.segments && after.version == before.version && after.etag == before.etag)
        #expect(try await index.changeObject(ObjectName(bucket: "photos", key: "none"), .deleteAfterDays(1)) == nil)
    }

    @Test(arguments: IndexKind.allCases)
    func theLifecycleSweepDeletesWhatRanOutAndKeepsSharedBlobs(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let (a, b) = (BlobID.random(), BlobID.random())
        try await put(index, "old", [a])  // putTime 1000, 7 days
        try await put(index, "shared", [b])
        _ = try await index.copyObject(
            from: ObjectName(bucket: "photos", key: "shared"), to: ObjectName(bucket: "photos", key: "keeper"),
            mode: .insertOnly, putTime: 1000, removeSource: false)
        _ = try await index.changeObject(ObjectName(bucket: "photos", key: "keeper"), .deleteAfterDays(nil))
        let due = 1000 + 7 * 86_400
        #expect(try await index.deleteExpiredObjects(now: Int64(due) - 1, limit: 10) == ExpiredObjects())
        let first = try await index.deleteExpiredObjects(now: Int64(due), limit: 1)
        #expect(first.names.count == 1)
        let rest = try await index.deleteExpiredObjects(now: Int64(due), limit: 10)
        #expect(Set((first.names + rest.names).map(\.key)) == ["old", "shared"])
        #expect(Set(first.blobs + rest.blobs) == [a])  // b lives on in "keeper"
        #expect(try await index.object(bucket: "photos", key: "keeper") != nil)
        #expect(try await index.knownBlobs() == [b])
    }
}
