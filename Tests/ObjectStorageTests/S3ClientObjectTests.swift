import Foundation
import HTTPTransport
import NativeCrypto
import ObjectStorage
import Testing
import TestSupport

/// Object operations against a real SeaweedFS: bytes compared with the bytes themselves.
@Suite("S3 objects on SeaweedFS")
struct S3ClientObjectTests {
    @Test func streamedSixtyFourMebibytePutAndRangedGets() async throws {
        let client = try await freshClient()
        let size = 64 << 20
        let etag = try await client.putObject("big/object.bin", body: .stream(Pattern.stream(0..<size)))
        let info = try await client.headObject("big/object.bin")
        #expect(info.size == Int64(size))
        #expect(info.etag == etag && !etag.isEmpty)

        let whole = try await client.getObject("big/object.bin")
        #expect(whole.range == 0..<Int64(size))
        let read = try await hashBody(whole.body)
        #expect(read.count == size)
        #expect(read.sha256 == Pattern.sha256(0..<size))

        let ranges: [Range<Int>] = [0..<1, (4 << 20) - 1..<(4 << 20) + 1, size - 10..<size, (20 << 20) + 333..<(27 << 20) + 5]
        for range in ranges {
            let part = try await client.getObject("big/object.bin", range: Int64(range.lowerBound)..<Int64(range.upperBound))
            #expect(part.range == Int64(range.lowerBound)..<Int64(range.upperBound))
            #expect(part.info.size == Int64(size))
            let bytes = try await part.body.collect(upTo: 8 << 20)
            #expect(bytes == Pattern.bytes(range), "range \(range)")
        }
    }

    @Test func fileRegionAndBytesBodies() async throws {
        let client = try await freshClient()
        let bytes = Pattern.bytes(0..<300_000, seed: 3)
        let path = FileManager.default.temporaryDirectory.appending(path: "s3-body-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await client.putObject("file", body: .file(path: path, offset: 1000, length: 200_000))
        _ = try await client.putObject("bytes", body: .bytes(Array(bytes[5..<9])), contentType: "text/plain")
        #expect(try await client.getObject("file").body.collect(upTo: 1 << 20) == Array(bytes[1000..<201_000]))
        #expect(try await client.getObject("bytes").body.collect(upTo: 10) == Array(bytes[5..<9]))
        #expect(try await client.headObject("bytes").contentType == "text/plain")
    }

    @Test func listingWithContinuation() async throws {
        let client = try await freshClient()
        let keys = (0..<7).map { "list/\($0) key+ü" }
        for key in keys { _ = try await client.putObject(key, body: .bytes(Array(key.utf8))) }
        _ = try await client.putObject("other/x", body: .bytes([1]))
        var seen: [S3ListedObject] = [], pages = 0
        var token: String?
        repeat {
            let page = try await client.listObjects(prefix: "list/", continuationToken: token, maxKeys: 3)
            seen += page.objects
            token = page.continuationToken
            pages += 1
        } while token != nil && pages < 10
        #expect(pages == 3)
        #expect(seen.map(\.key) == keys.sorted())
        #expect(seen.map(\.size) == keys.sorted().map { Int64($0.utf8.count) })
    }

    @Test func batchDeleteRemovesWhatItNames() async throws {
        let client = try await freshClient()
        for index in 0..<5 { _ = try await client.putObject("del/\(index)", body: .bytes([UInt8(index)])) }
        let failed = try await client.deleteObjects(["del/0", "del/1", "del/3", "del/4", "del/never-existed"])
        #expect(failed.isEmpty)
        #expect(try await client.listObjects(prefix: "del/").objects.map(\.key) == ["del/2"])
        // More than one request's worth (1000 keys per DeleteObjects).
        #expect(try await client.deleteObjects((0..<1001).map { "none/\($0)" }).isEmpty)
        try await client.deleteObject("del/2")
        try await client.deleteObject("del/2")
        #expect(try await client.listObjects(prefix: "del/").objects.isEmpty)
    }

    @Test func failedProducerStoresNothing() async throws {
        struct ClientGone: Error {}
        let client = try await freshClient()
        let pieces = AsyncThrowingStream<[UInt8], any Error> { continuation in
            continuation.yield(Pattern.bytes(0..<(1 << 20)))
            continuation.finish(throwing: ClientGone())
        }
        let error = await s3Error {
            _ = try await client.putObject("half", body: .stream(StreamedRequestBody(length: 4 << 20, pieces: pieces)))
        }
        #expect(error?.kind == .other)
        #expect(error?.message.contains("ClientGone") == true)
        #expect(await s3Error { _ = try await client.headObject("half") }?.kind == .notFound)
    }
}
