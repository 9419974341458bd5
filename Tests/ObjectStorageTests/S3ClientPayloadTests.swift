import Foundation
import HTTPTransport
@testable import ObjectStorage
import Synchronization
import Testing
import TestSupport

/// How object bodies are protected on the way to the store (``S3Settings/PayloadIntegrity``):
/// the headers checked against published check values, the store's acceptance on SeaweedFS.
@Suite("S3 payload integrity")
struct S3ClientPayloadTests {
    /// "123456789": the check string of the CRC and SHA catalogues.
    static let checkBytes = Array("123456789".utf8)
    /// CRC-32 (ISO-HDLC, zlib's) of the check string is 0xCBF43926: these four bytes in base64.
    static let checkCRC32 = Data([0xCB, 0xF4, 0x39, 0x26]).base64EncodedString()
    /// SHA-256 of the check string (FIPS 180 test vectors, as published).
    static let checkSHA256 = "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"

    @Test func overHTTPSAnObjectBodyGoesUnsignedWithItsCRC32InASignedHeader() async throws {
        let (client, transport) = try Self.recordingClient("https://s3.example.test")
        _ = try await client.putObject("k", body: .bytes(Self.checkBytes))
        let request = try #require(transport.sent.withLock { $0.first })
        #expect(request.header("x-amz-content-sha256") == "UNSIGNED-PAYLOAD")
        #expect(request.header("x-amz-checksum-crc32") == Self.checkCRC32)
        #expect(request.signedHeaders.contains("x-amz-checksum-crc32"))
        #expect(request.body == Self.checkBytes)
    }

    @Test func overHTTPTheBodysSHA256IsSigned() async throws {
        let (client, transport) = try Self.recordingClient("http://127.0.0.1:9")
        _ = try await client.putObject("k", body: .bytes(Self.checkBytes))
        let request = try #require(transport.sent.withLock { $0.first })
        #expect(request.header("x-amz-content-sha256") == Self.checkSHA256)
        #expect(request.header("x-amz-checksum-crc32") == nil)
    }

    @Test func theSettingOverridesTheScheme() async throws {
        let (https, httpsTransport) = try Self.recordingClient("https://s3.example.test", integrity: .sha256)
        _ = try await https.putObject("k", body: .bytes(Self.checkBytes))
        #expect(httpsTransport.sent.withLock { $0.first?.header("x-amz-content-sha256") } == Self.checkSHA256)
        let (http, httpTransport) = try Self.recordingClient("http://127.0.0.1:9", integrity: .crc32)
        _ = try await http.putObject("k", body: .bytes(Self.checkBytes))
        #expect(httpTransport.sent.withLock { $0.first?.header("x-amz-checksum-crc32") } == Self.checkCRC32)
    }

    /// DeleteObjects' XML keeps its signed SHA-256 (and its Content-MD5): a checksum header
    /// is for object content only.
    @Test func documentsOtherThanObjectBodiesStaySigned() async throws {
        let (client, transport) = try Self.recordingClient("https://s3.example.test")
        _ = try await client.deleteObjects(["a", "b"])
        let request = try #require(transport.sent.withLock { $0.first })
        #expect(request.header("x-amz-checksum-crc32") == nil)
        let hash = try #require(request.header("x-amz-content-sha256"))
        #expect(hash.count == 64 && hash != "UNSIGNED-PAYLOAD")
    }

    /// SeaweedFS checks `x-amz-checksum-crc32` as AWS does: the right CRC stores the bytes, a
    /// wrong one is refused and stores nothing.
    @Test func theStoreAcceptsTheCRC32AndRefusesAWrongOne() async throws {
        let client = try await freshClient(payloadIntegrity: .crc32)
        let bytes = Pattern.bytes(0..<(512 << 10), seed: 7)
        _ = try await client.putObject("crc/good", body: .bytes(bytes))
        #expect(try await client.getObject("crc/good").body.collect(upTo: 1 << 20) == bytes)

        let wrong = await s3Error {
            _ = try await client.send(
                "PUT", key: "crc/bad", headers: [("x-amz-checksum-crc32", Self.checkCRC32)], body: .bytes(bytes),
                timeout: .seconds(20))
        }
        #expect(wrong?.status == 400, "\(String(describing: wrong))")
        // Damaged on the way, not refused as malformed: the blob store answers 503, and the
        // uploader sends the chunk again.
        #expect(wrong?.kind == .damagedInTransit && wrong?.isRetryable == true, "\(String(describing: wrong))")
        #expect(await s3Error { _ = try await client.headObject("crc/bad") }?.kind == .notFound)
    }

    // MARK: - A transport that answers 200 and keeps what it was asked

    struct SentRequest: Sendable {
        var headers: [(String, String)]
        var body: [UInt8]?

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        /// The `SignedHeaders=` list of the Authorization header.
        var signedHeaders: [String] {
            guard let authorization = header("Authorization"), let range = authorization.range(of: "SignedHeaders=") else { return [] }
            let list = authorization[range.upperBound...].prefix { $0 != "," }
            return list.split(separator: ";").map(String.init)
        }
    }

    final class RecordingTransport: StreamingHTTPTransport {
        let sent = Mutex<[SentRequest]>([])

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            try await stream(request, body: nil).head
        }

        func stream(_ request: TransportRequest, body: StreamedRequestBody?) async throws -> StreamingResponse {
            var bytes: [UInt8]?
            if case .bytes(let b) = request.body { bytes = b }
            sent.withLock { $0.append(SentRequest(headers: request.headers, body: bytes)) }
            let answer: [UInt8] = request.method == "POST" ? Array("<DeleteResult></DeleteResult>".utf8) : []
            return StreamingResponse(head: TransportResponse(status: 200, headers: [("ETag", "\"e\"")]), body: ResponseBody(bytes: answer))
        }
    }

    static func recordingClient(
        _ endpoint: String, integrity: S3Settings.PayloadIntegrity? = nil
    ) throws -> (S3Client, RecordingTransport) {
        let transport = RecordingTransport()
        let settings = S3Settings(
            endpoint: endpoint, bucket: "upgate", credentials: S3Credentials(accessKeyId: "AKID", secretAccessKey: "secret"),
            payloadIntegrity: integrity)
        return (try S3Client(settings: settings, transport: transport), transport)
    }
}
