import Foundation
import HTTPTransport
import NativeCrypto
import ObjectStorage
import TestSupport

/// A client on a fresh bucket of the shared SeaweedFS (or of `store`), bucket created.
func freshClient(
    _ store: SeaweedFS? = nil, secret: String? = nil, addressing: S3Settings.Addressing = .path,
    payloadIntegrity: S3Settings.PayloadIntegrity? = nil
) async throws -> S3Client {
    let store = if let store { store } else { try await SeaweedFS.shared() }
    let settings = S3Settings(
        endpoint: store.endpoint, region: store.region, bucket: SeaweedFS.uniqueBucket(),
        credentials: S3Credentials(accessKeyId: store.accessKeyId, secretAccessKey: secret ?? store.secretAccessKey),
        addressing: addressing, requestTimeout: .seconds(20), transferTimeout: .seconds(120), payloadIntegrity: payloadIntegrity)
    let client = try S3Client(settings: settings, transport: try CurlTransport())
    if secret == nil { try await client.createBucket() }
    return client
}

/// ``BytePattern`` as streamed bodies and digests.
enum Pattern {
    static func bytes(_ range: Range<Int>, seed: Int = 0) -> [UInt8] { BytePattern.bytes(range, seed: seed) }

    /// The pattern at `range` as a streamed body in pieces of `piece` bytes.
    static func stream(_ range: Range<Int>, seed: Int = 0, piece: Int = 60_000) -> StreamedRequestBody {
        let pieces = AsyncThrowingStream<[UInt8], any Error> { continuation in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let end = min(range.upperBound, offset + piece)
                continuation.yield(bytes(offset..<end, seed: seed))
                offset = end
            }
            continuation.finish()
        }
        return StreamedRequestBody(length: Int64(range.count), pieces: pieces)
    }

    /// Hex SHA-256 of the pattern at `range`, computed in 1 MiB steps.
    static func sha256(_ range: Range<Int>, seed: Int = 0) -> String {
        var digest = Digest(.sha256)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let end = min(range.upperBound, offset + (1 << 20))
            digest.update(bytes(offset..<end, seed: seed))
            offset = end
        }
        return Hex.encode(digest.finalize())
    }
}

/// Reads a streamed body to its end: its length and hex SHA-256.
func hashBody(_ body: ResponseBody) async throws -> (count: Int, sha256: String) {
    var digest = Digest(.sha256)
    var count = 0
    for try await piece in body {
        digest.update(piece)
        count += piece.count
    }
    return (count, Hex.encode(digest.finalize()))
}

/// The ``S3Error`` `body` threw, or nil.
func s3Error(_ body: () async throws -> Void) async -> S3Error? {
    do {
        try await body()
        return nil
    } catch let error as S3Error {
        return error
    } catch {
        return S3Error(.other, message: "not an S3Error: \(error)")
    }
}
