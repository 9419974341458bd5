import Foundation
import HTTPTransport
import ObjectStorage
import Testing
import TestSupport
import UpServer

/// Which `BlockStore` a contract test runs against; every behaviour must hold for each.
enum BlobStoreKind: String, CaseIterable, CustomTestStringConvertible {
    /// Files, and small blobs as rows (the default).
    case disk
    /// Files only (`smallBlobLimit: nil`), so every case also runs against files of a few bytes.
    case diskFiles
    case memory
    case s3

    var testDescription: String { rawValue }

    /// A fresh, empty store (S3: a new bucket on the shared SeaweedFS).
    func make(_ directory: TemporaryDirectory) async throws -> any BlockStore {
        switch self {
        case .disk: try FileBlockStore(dataDirectory: directory.url)
        case .diskFiles: try FileBlockStore(dataDirectory: directory.url, smallBlobLimit: nil)
        case .memory: InMemoryBlockStore()
        case .s3: try await s3BlockStore(directory)
        }
    }
}

/// An `S3BlockStore` on a fresh bucket of the test process's shared SeaweedFS, talking through
/// `transport` (a fresh libcurl one unless a test watches the requests).
func s3BlockStore(
    _ directory: TemporaryDirectory, bucket: String = SeaweedFS.uniqueBucket("blobs"),
    transport: (any StreamingHTTPTransport)? = nil
) async throws -> S3BlockStore {
    let seaweed = try await SeaweedFS.shared()
    let settings = S3Settings(
        endpoint: seaweed.endpoint, region: seaweed.region, bucket: bucket,
        credentials: S3Credentials(accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey),
        requestTimeout: .seconds(20), transferTimeout: .seconds(60))
    let client = try S3Client(settings: settings, transport: try transport ?? CurlTransport())
    try? await client.createBucket()
    return S3BlockStore(client: client)
}

/// The `BlockStore` contract: disk (with and without small blobs as rows), memory and S3 (SeaweedFS).
@Suite("BlockStore contract")
struct BlockStoreContractTests {
    @Test(arguments: BlobStoreKind.allCases)
    func appendTruncatesAnUnacknowledgedTailToTheExpectedOffset(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        try await BlockingIO.run {
            let blob = try store.create()
            #expect(try store.length(of: blob) == 0)
            #expect(try store.append(Array("0123".utf8), to: blob, at: 0) == 4)
            #expect(try store.append(Array("456789".utf8), to: blob, at: 4) == 10)
            // The index only acknowledged 6 bytes: 6..<10 are a write that was never answered
            // (and, in S3, half of a chunk object).
            #expect(try store.append(Array("abc".utf8), to: blob, at: 6) == 9)
            #expect(try store.read(blob, range: 0..<9) == Array("012345abc".utf8))
            #expect(try store.length(of: blob) == 9)
            // Back to a chunk boundary, then to nothing: the blob still exists, empty.
            #expect(try store.append(Array("XY".utf8), to: blob, at: 4) == 6)
            #expect(try store.read(blob, range: 0..<6) == Array("0123XY".utf8))
            #expect(try store.append([], to: blob, at: 0) == 0)
            #expect(try store.length(of: blob) == 0)
            #expect(try store.append([7], to: blob, at: 0) == 1)
            #expect(try store.read(blob, range: 0..<1) == [7])
        }
    }

    /// The next pieces of one write continue where the writer's own append ended; a later
    /// checked append still cuts what was never acknowledged, across those pieces too.
    @Test(arguments: BlobStoreKind.allCases)
    func appendFollowingContinuesTheWritersOwnAppend(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        try await BlockingIO.run {
            let blob = try store.create()
            #expect(try store.append(Array("0123".utf8), to: blob, at: 0) == 4)
            #expect(try store.appendFollowing(Array("4567".utf8), to: blob, at: 4) == 8)
            #expect(try store.appendFollowing([], to: blob, at: 8) == 8)
            #expect(try store.appendFollowing(Array("89".utf8), to: blob, at: 8) == 10)
            #expect(try store.read(blob, range: 0..<10) == Array("0123456789".utf8))
            #expect(try store.length(of: blob) == 10)
            // Only 2 bytes were acknowledged: the next write cuts the rest, whole pieces and all.
            #expect(try store.append(Array("ab".utf8), to: blob, at: 2) == 4)
            #expect(try store.appendFollowing(Array("cd".utf8), to: blob, at: 4) == 6)
            #expect(try store.read(blob, range: 0..<6) == Array("01abcd".utf8))
            #expect(try store.length(of: blob) == 6)
        }
    }

    /// On S3 that saving is the point: one PUT per following piece, where a checked append
    /// lists the blob's chunks first.
    @Test func onS3AFirstOrFollowingAppendIsOnePutAndACheckedOneListsFirst() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let transport = CountingTransport(try CurlTransport())
        let store = try await s3BlockStore(directory, transport: transport)
        transport.methods = []
        let blob = try await BlockingIO.run { try store.create() }
        _ = try await BlockingIO.run { try store.append([1, 2], to: blob, at: 0) }
        #expect(transport.methods == ["PUT"])  // create() stores nothing; the first append is one PUT
        transport.methods = []
        _ = try await BlockingIO.run { try store.appendFollowing([3, 4], to: blob, at: 2) }
        #expect(transport.methods == ["PUT"])
        transport.methods = []
        _ = try await BlockingIO.run { try store.append([5], to: blob, at: 4) }
        #expect(transport.methods.first == "GET" && transport.methods.last == "PUT")  // list, (delete,) put
        #expect(try await BlockingIO.run { try store.read(blob, range: 0..<5) } == [1, 2, 3, 4, 5])

        // An empty blob exists for other instances once synced (BlobSink syncs every empty blob
        // it seals); before, only in the process that made it.
        let other = S3BlockStore(client: store.client)
        try await BlockingIO.run {
            let empty = try store.create()
            #expect(try store.length(of: empty) == 0)
            #expect(throws: BlockStoreError.notFound(empty)) { _ = try other.length(of: empty) }
            try store.sync(empty)
            #expect(try other.length(of: empty) == 0)
        }
    }

    /// The head mkfile sniffs a type from, inside the blob's first chunk, is one GET on S3 (no
    /// LIST); a range past that chunk, an unknown blob and a range past the end read as before.
    @Test func onS3ARangeInsideTheFirstChunkIsReadWithOneGet() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let transport = CountingTransport(try CurlTransport())
        let store = try await s3BlockStore(directory, transport: transport)
        let data = BytePattern.bytes(0..<200, seed: 3)
        let blob = try await BlockingIO.run { try store.create() }
        _ = try await BlockingIO.run { try store.append(Array(data[..<100]), to: blob, at: 0) }
        _ = try await BlockingIO.run { try store.appendFollowing(Array(data[100...]), to: blob, at: 100) }
        for range: Range<Int64> in [0..<50, 90..<100, 0..<100] {
            transport.methods = []
            #expect(try await BlockingIO.run { try store.read(blob, range: range) } == Array(data[Int(range.lowerBound)..<Int(range.upperBound)]))
            #expect(transport.methods == ["GET"])
        }
        transport.methods = []
        #expect(try await BlockingIO.run { try store.read(blob, range: 50..<150) } == Array(data[50..<150]))
        #expect(transport.methods.count > 2)  // the first chunk falls short: list, then each chunk
        try await BlockingIO.run {
            #expect(throws: BlockStoreError.outOfRange(blob, requested: 150..<201, length: 200)) {
                _ = try store.read(blob, range: 150..<201)
            }
            let unknown = BlobID.random()
            #expect(throws: BlockStoreError.notFound(unknown)) { _ = try store.read(unknown, range: 0..<5) }
        }
    }

    @Test(arguments: BlobStoreKind.allCases)
    func aBlobShorterThanTheAcknowledgedOffsetIsAnError(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        try await BlockingIO.run {
            let blob = try store.create()
            _ = try store.append([1, 2, 3], to: blob, at: 0)
            #expect(throws: BlockStoreError.missingBytes(blob, expected: 5, actual: 3)) {
                try store.append([4], to: blob, at: 5)
            }
            #expect(try store.length(of: blob) == 3)
            let unknown = BlobID.random()
            #expect(throws: BlockStoreError.notFound(unknown)) { _ = try store.append([1], to: unknown, at: 0) }
            #expect(throws: BlockStoreError.notFound(unknown)) { _ = try store.length(of: unknown) }
            #expect(throws: BlockStoreError.notFound(unknown)) { try store.sync(unknown) }
        }
    }

    @Test(arguments: BlobStoreKind.allCases)
    func rangesAcrossChunksStreamTheRightBytesInBoundedPieces(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        try await BlockingIO.run {
            let data = BytePattern.bytes(0..<1000, seed: 7)
            let blob = try store.create()
            var offset: Int64 = 0
            for start in stride(from: 0, to: 1000, by: 250) {  // four chunks, as four bputs
                offset = try store.append(Array(data[start..<(start + 250)]), to: blob, at: offset)
            }
            try store.sync(blob)
            var pieces: [[UInt8]] = []
            try store.forEachChunk(of: blob, range: 100..<900, size: 300) { pieces.append($0) }
            #expect(pieces.joined().elementsEqual(data[100..<900]))
            #expect(pieces.allSatisfy { $0.count <= 300 })
            var whole: [UInt8] = []
            try store.forEachChunk(of: blob, size: 64) { whole += $0 }
            #expect(whole == data)
            #expect(try store.read(blob, range: 990..<1000) == Array(data[990...]))
            #expect(try store.read(blob, range: 240..<260) == Array(data[240..<260]))
            #expect(throws: BlockStoreError.outOfRange(blob, requested: 990..<1001, length: 1000)) {
                _ = try store.read(blob, range: 990..<1001)
            }
        }
    }

    @Test(arguments: BlobStoreKind.allCases)
    func listNamesEveryBlobAndRemoveIsIdempotent(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        try await BlockingIO.run {
            let blobs = try (0..<3).map { _ in try store.create() }
            _ = try store.append([9, 8, 7], to: blobs[0], at: 0)
            _ = try store.append([6], to: blobs[0], at: 3)
            #expect(try store.list() == blobs.sorted())
            try store.remove(blobs[0])
            try store.remove(blobs[0])
            try store.remove(BlobID.random())
            #expect(try store.list() == Array(blobs[1...]).sorted())
            #expect(throws: BlockStoreError.notFound(blobs[0])) { _ = try store.length(of: blobs[0]) }
        }
    }

    @Test(arguments: BlobStoreKind.allCases)
    func theInventoryDatesEachBlobByItsNewestWrite(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        let (blob, created) = try await BlockingIO.run {
            let blob = try store.create()
            return (blob, try #require(try store.inventory().first { $0.id == blob }).modifiedAt)
        }
        // The store's clock, not ours: within a few seconds of this machine's (SeaweedFS runs here).
        #expect(abs(created - Date().timeIntervalSince1970) < 5)
        try await Task.sleep(for: .milliseconds(2100))  // S3 dates have whole seconds
        let other = try await BlockingIO.run {
            _ = try store.append([1, 2, 3], to: blob, at: 0)
            let other = try store.create()
            let listed = try store.inventory()
            #expect(listed.map(\.id) == [blob, other].sorted())
            let appended = try #require(listed.first { $0.id == blob }).modifiedAt
            #expect(appended - created >= 1, "an append makes the blob young again")
            return other
        }
        try await BlockingIO.run {
            try store.remove(blob)
            #expect(try store.inventory().map(\.id) == [other])
        }
    }

    @Test(arguments: BlobStoreKind.allCases)
    func aDownloadOfSeveralSegmentsIsTheirBytesInOrder(kind: BlobStoreKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await kind.make(directory)
        let (segments, expected) = try await BlockingIO.run {
            var segments: [Segment] = []
            var expected: [UInt8] = []
            for seed in 0..<3 {
                let bytes = BytePattern.bytes(0..<(700 + seed), seed: seed)
                let blob = try store.create()
                _ = try store.append(Array(bytes[..<300]), to: blob, at: 0)
                _ = try store.append(Array(bytes[300...]), to: blob, at: 300)
                segments.append(Segment(blob: blob, length: Int64(bytes.count)))
                expected += bytes
            }
            return (segments, expected)
        }
        // The whole object, a range inside one chunk object, one across chunks of one blob, one
        // across all three blobs, the last byte; pieces of 128 bytes, so a blob gives several.
        let total = Int64(expected.count)
        for wanted in [0..<total, 10..<20, 250..<650, 650..<1450, (total - 1)..<total] {
            let reader = try SegmentReader(store: store, segments: segments, range: wanted, pieceSize: 128)
            var streamed: [UInt8] = []
            while let piece = try await reader.next() {
                #expect(!piece.isEmpty && piece.count <= 128, "\(wanted)")
                streamed += piece
            }
            #expect(streamed == Array(expected[Int(wanted.lowerBound)..<Int(wanted.upperBound)]), "\(wanted)")
        }
        #expect(throws: BlockStoreError.self) { _ = try SegmentReader(store: store, segments: segments, range: 0..<(total + 1)) }
        // A segment longer than its blob: the reader fails instead of ending short.
        let long = [Segment(blob: segments[0].blob, length: segments[0].length + 5)]
        await #expect(throws: BlockStoreError.self) {
            let reader = try SegmentReader(store: store, segments: long, range: 0..<(segments[0].length + 5))
            while try await reader.next() != nil {}
        }
        // A cancelled reader stops.
        let cancelled = try SegmentReader(store: store, segments: segments, range: 0..<total, pieceSize: 128)
        _ = try await cancelled.next()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.next() }

        guard let ranges = store as? any ByteRangeServing else { return }  // memory, S3: streamed only
        // A range within one blob is that blob's own file.
        let found = try await BlockingIO.run { try ranges.fileRange(of: segments[1].blob, range: 5..<600) }
        guard kind == .diskFiles else {
            #expect(found == nil, "a small blob is a row: read, not sent as a file range")
            return
        }
        let range = try #require(found)
        let handle = FileHandle(fileDescriptor: range.descriptor, closeOnDealloc: true)
        try handle.seek(toOffset: range.offset)
        #expect(range.length == 595)
        #expect(Array(try handle.read(upToCount: 595) ?? Data()) == Array(expected[705..<1300]))
        await #expect(throws: BlockStoreError.self) {
            try await BlockingIO.run { _ = try ranges.fileRange(of: segments[0].blob, range: 0..<701) }
        }
    }
}

/// A transport that notes the method of every request it passes on.
final class CountingTransport: StreamingHTTPTransport, @unchecked Sendable {
    private let inner: any StreamingHTTPTransport
    private let lock = NSLock()
    private var seen: [String] = []

    init(_ inner: any StreamingHTTPTransport) { self.inner = inner }

    /// The methods of the requests so far, in order; a test resets it between steps.
    var methods: [String] {
        get { lock.withLock { seen } }
        set { lock.withLock { seen = newValue } }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        lock.withLock { seen.append(request.method) }
        return try await inner.send(request)
    }

    func stream(_ request: TransportRequest, body: StreamedRequestBody?) async throws -> StreamingResponse {
        lock.withLock { seen.append(request.method) }
        return try await inner.stream(request, body: body)
    }
}
