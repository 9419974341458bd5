import Foundation
import HTTPKit
import HTTPTransport
import ObjectStorage
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// `S3BlockStore` beyond the `BlockStore` contract: the chunk arithmetic, and a store that does
/// not answer.
@Suite("S3BlockStore")
struct S3BlockStoreTests {
    static func chunk(_ offset: Int64, _ size: Int64) -> S3BlobChunk {
        S3BlobChunk(key: S3BlockStore.chunkKey(BlobID(hex: String(repeating: "a", count: 32))!, at: offset), offset: offset, size: size)
    }

    @Test func aBlobIsTheChainOfItsChunksFromZero() {
        let chunks = [Self.chunk(0, 4), Self.chunk(4, 6), Self.chunk(12, 3)]  // 10..<12 lost: 12 is past a gap
        #expect(S3BlobChunk.chainLength(chunks) == 10)
        #expect(S3BlobChunk.chainLength([Self.chunk(0, 0)]) == 0)
        let (stale, straddling) = S3BlobChunk.beyond(6, in: chunks)
        #expect(stale == [Self.chunk(12, 3)] && straddling == Self.chunk(4, 6))
        let pieces = S3BlobChunk.pieces(of: 2..<9, in: chunks)
        #expect(pieces.map(\.0.offset) == [0, 4] && pieces.map(\.1) == [2..<4, 0..<5])
        #expect(S3BlockStore.chunkKey(BlobID(hex: String(repeating: "b", count: 32))!, at: 4_194_304)
            == "blobs/\(String(repeating: "b", count: 32))/000004194304")
    }

    @Test func aStoreThatDoesNotAnswerIs503StoreUnavailable() async throws {
        // Port 1 on loopback: nothing listens there, so the connect is refused at once.
        let port = 1
        let settings = S3Settings(
            endpoint: "http://127.0.0.1:\(port)", bucket: "upgate",
            credentials: S3Credentials(accessKeyId: "k", secretAccessKey: "s"), requestTimeout: .seconds(2))
        let store = S3BlockStore(client: try S3Client(settings: settings, transport: try CurlTransport()))
        // create() stores nothing: a blob's first append is its first request.
        let error = await #expect(throws: S3Error.self) {
            try await BlockingIO.run { try store.append([1], to: try store.create(), at: 0) }
        }
        #expect(error.map { StoreUnavailable.isUnavailable($0) } == true)
        #expect(UpError(.storeUnavailable).responseHeaders["Retry-After"] == "5")
    }

    /// A chunk the store says arrived damaged (`BadDigest`: its CRC-32 or SHA-256 did not match,
    /// SeaweedFS's answer in ObjectStorageTests) is a transient store failure, 503 with
    /// Retry-After, so the uploader sends it again; not an internal error.
    @Test func aChunkTheStoreFoundDamagedIs503StoreUnavailable() async throws {
        let settings = S3Settings(
            endpoint: "https://s3.example.test", bucket: "upgate", credentials: S3Credentials(accessKeyId: "k", secretAccessKey: "s"))
        let store = S3BlockStore(client: try S3Client(settings: settings, transport: BadDigestTransport()))
        // create() stores nothing: a blob's first append is its first request.
        let error = await #expect(throws: S3Error.self) {
            try await BlockingIO.run { try store.append([1], to: try store.create(), at: 0) }
        }
        #expect(error?.kind == .damagedInTransit)
        #expect(error.map { StoreUnavailable.isUnavailable($0) } == true)
    }

    /// Answers every request as S3 answers a body whose checksum does not match.
    struct BadDigestTransport: StreamingHTTPTransport {
        static let document = Array(
            "<Error><Code>BadDigest</Code><Message>The Content-Md5 you specified did not match what we received.</Message></Error>".utf8)

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            TransportResponse(status: 400, body: Self.document)
        }

        func stream(_ request: TransportRequest, body: StreamedRequestBody?) async throws -> StreamingResponse {
            StreamingResponse(head: TransportResponse(status: 400), body: ResponseBody(bytes: Self.document))
        }
    }
}
