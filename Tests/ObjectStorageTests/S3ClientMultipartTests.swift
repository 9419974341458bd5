import ObjectStorage
import Testing
import TestSupport

/// Multipart uploads against a real SeaweedFS: streamed parts, copied parts with ranges,
/// completion, abort and the listing a sweeper walks.
@Suite("S3 multipart on SeaweedFS")
struct S3ClientMultipartTests {
    @Test func streamedAndCopiedPartsAssembleTheObject() async throws {
        let client = try await freshClient()
        let a = 6 << 20, b = (5 << 20) + 3, first = 5 << 20
        _ = try await client.putObject("src/a", body: .stream(Pattern.stream(0..<a, seed: 1)))
        _ = try await client.putObject("src/b", body: .stream(Pattern.stream(0..<b, seed: 2)))
        let upload = try await client.createMultipartUpload("assembled", contentType: "application/octet-stream")
        let copyRange = (1 << 19)..<a
        let parts = [
            S3CompletedPart(number: 1, etag: try await client.uploadPart(
                "assembled", uploadId: upload, number: 1, body: .stream(Pattern.stream(0..<first, seed: 3)))),
            S3CompletedPart(number: 2, etag: try await client.uploadPartCopy(
                "assembled", uploadId: upload, number: 2, source: "src/a", range: Int64(copyRange.lowerBound)..<Int64(copyRange.upperBound))),
            S3CompletedPart(number: 3, etag: try await client.uploadPartCopy("assembled", uploadId: upload, number: 3, source: "src/b")),
        ]
        #expect(parts.allSatisfy { !$0.etag.isEmpty })
        let etag = try await client.completeMultipartUpload("assembled", uploadId: upload, parts: parts)
        #expect(etag.hasSuffix("-3"))
        let expected = Pattern.bytes(0..<first, seed: 3) + Pattern.bytes(copyRange, seed: 1) + Pattern.bytes(0..<b, seed: 2)
        let read = try await hashBody(try await client.getObject("assembled").body)
        #expect(read.count == expected.count)
        #expect(read.sha256 == Hex.of(expected))
        #expect(try await client.listMultipartUploads(prefix: "assembled").uploads.isEmpty)
    }

    @Test func aSmallPartBeforeTheLastIsRejected() async throws {
        let client = try await freshClient()
        let upload = try await client.createMultipartUpload("small")
        let parts = [
            S3CompletedPart(number: 1, etag: try await client.uploadPart("small", uploadId: upload, number: 1, body: .bytes(Pattern.bytes(0..<(4 << 20))))),
            S3CompletedPart(number: 2, etag: try await client.uploadPart("small", uploadId: upload, number: 2, body: .bytes([1, 2, 3]))),
        ]
        let error = await s3Error { _ = try await client.completeMultipartUpload("small", uploadId: upload, parts: parts) }
        #expect(error?.kind == .rejected)
        #expect(error?.code == "EntityTooSmall")
        try await client.abortMultipartUpload("small", uploadId: upload)
    }

    @Test func abandonedUploadsAreListedAndAborted() async throws {
        let client = try await freshClient()
        var created: [String: String] = [:]
        for name in ["sweep/a", "sweep/b", "sweep/c"] {
            created[try await client.createMultipartUpload(name)] = name
        }
        _ = try await client.createMultipartUpload("keep/d")
        func listAll() async throws -> ([S3MultipartUpload], Int) {
            var all: [S3MultipartUpload] = [], marker: S3MultipartUploadListing.Marker?, pages = 0
            for _ in 0..<10 {
                pages += 1
                let page = try await client.listMultipartUploads(prefix: "sweep/", after: marker, maxUploads: 2)
                all += page.uploads
                guard let next = page.next else { break }
                marker = next
            }
            return (all, pages)
        }
        let (listed, pages) = try await listAll()
        #expect(pages == 2)
        #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0.uploadId, $0.key) }) == created)
        #expect(listed.allSatisfy { !$0.initiated.isEmpty })
        for upload in listed { try await client.abortMultipartUpload(upload.key, uploadId: upload.uploadId) }
        #expect(try await listAll().0.isEmpty)
        let gone = await s3Error {
            _ = try await client.uploadPart("sweep/a", uploadId: listed[0].uploadId, number: 1, body: .bytes([1]))
        }
        #expect(gone?.kind == .notFound)
    }
}

extension Hex {
    /// Hex SHA-256 of `bytes`.
    static func of(_ bytes: [UInt8]) -> String { encode(SHA256.hash(bytes)) }
}

import NativeCrypto
