public import Basics
public import HTTPTransport
import NativeCrypto

/// A client for one bucket of an S3-compatible object store (AWS S3, SeaweedFS, MinIO, Ceph RGW,
/// R2): the operations up-server's blob store needs, signed with ``SigV4Signer`` and sent over a
/// ``StreamingHTTPTransport`` so object bodies stream both ways.
///
/// Every failure is an ``S3Error``. The operations live in extensions by subject: objects,
/// multipart uploads, the bucket.
public final class S3Client: Sendable {
    /// The settings (validated in `init`).
    public let settings: S3Settings
    let transport: any StreamingHTTPTransport
    let clock: any WallClock
    let signer: SigV4Signer
    /// ``S3Settings/payloadIntegrity``, resolved by the endpoint's scheme when not set.
    let payloadIntegrity: S3Settings.PayloadIntegrity
    private let scheme: String
    private let authority: String

    /// A body to send.
    public enum Body: Sendable {
        /// No body.
        case none
        /// Bytes in memory (blob appends, small documents): signed with their SHA-256, or, as
        /// `PutObject`'s body under ``S3Settings/PayloadIntegrity/crc32``, sent unsigned with
        /// their CRC-32 for the store to check.
        case bytes([UInt8])
        /// A region of a local file, streamed from disk; sent as an unsigned payload.
        case file(path: String, offset: Int64, length: Int64)
        /// Bytes produced while sent (an upload relayed as it arrives); an unsigned payload.
        case stream(StreamedRequestBody)

        var length: Int64 {
            switch self {
            case .none: 0
            case .bytes(let bytes): Int64(bytes.count)
            case .file(_, _, let length): length
            case .stream(let body): body.length
            }
        }
    }

    /// Creates a client.
    ///
    /// - Throws: `ConfigurationError` for settings that cannot work (see ``S3Settings/validate()``).
    public init(settings: S3Settings, transport: any StreamingHTTPTransport, clock: any WallClock = SystemClock()) throws(ConfigurationError) {
        try settings.validate()
        (scheme, authority) = try settings.parsedEndpoint()
        self.settings = settings
        self.transport = transport
        self.clock = clock
        signer = SigV4Signer(credentials: settings.credentials, region: settings.region)
        payloadIntegrity = settings.payloadIntegrity ?? (scheme == "https" ? .crc32 : .sha256)
    }

    /// Sends one signed request for `key` (nil: the bucket itself) and returns the response head
    /// with its body unread. A status of 300 or more is read as an S3 error document and thrown.
    ///
    /// - Parameter objectBody: `body` is an object's content (PutObject), so a `.bytes` body may
    ///   go as ``S3Settings/PayloadIntegrity/crc32``; other documents (DeleteObjects' XML,
    ///   CompleteMultipartUpload's, where a checksum header means something else) are always
    ///   signed with their SHA-256.
    func send(
        _ method: String, key: String?, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
        body: Body = .none, objectBody: Bool = false, timeout: Duration? = nil
    ) async throws(S3Error) -> StreamingResponse {
        let (host, path) = hostAndPath(key: key)
        var headers = headers
        let payloadHash: String
        switch body {
        case .none:
            payloadHash = SigV4Signer.emptyPayloadHash
        case .bytes(let bytes) where objectBody && payloadIntegrity == .crc32:
            headers.append(("x-amz-checksum-crc32", Self.checksumCRC32(bytes)))
            payloadHash = SigV4Signer.unsignedPayload
        case .bytes(let bytes):
            payloadHash = Hex.encode(SHA256.hash(bytes))
        case .file, .stream:
            payloadHash = SigV4Signer.unsignedPayload
        }
        let signed = signer.signedHeaders(
            for: SigV4Signer.Request(
                method: method, encodedPath: path, query: query, headers: [("Host", host)] + headers, payloadHash: payloadHash),
            at: SigV4Timestamp(clock: clock))
        let queryText = SigV4Signer.canonicalQuery(query)
        var request = TransportRequest(
            method: method, url: "\(scheme)://\(host)\(path)" + (queryText.isEmpty ? "" : "?\(queryText)"),
            headers: signed.map { ($0.name, $0.value) }, timeout: timeout ?? settings.requestTimeout)
        var streamed: StreamedRequestBody?
        switch body {
        case .none: break
        case .bytes(let bytes): request.body = .bytes(bytes)
        case .file(let path, let offset, let length): request.body = .file(path: path, offset: offset, length: length)
        case .stream(let body): streamed = body
        }
        let response: StreamingResponse
        do {
            response = try await transport.stream(request, body: streamed)
        } catch let error as TransportError {
            throw S3Error.from(error)
        } catch let error as S3Error {
            throw error
        } catch {
            // The streamed body's producer failed (e.g. the client relaying it disconnected).
            throw S3Error(.other, message: "request body failed: \(error)")
        }
        guard response.status < 300 else {
            let document = (try? await response.body.collect(upTo: 64 << 10)) ?? []
            throw S3Error.from(status: response.status, body: document)
        }
        return response
    }

    /// Sends a request and reads its (small) XML answer; some operations (CompleteMultipartUpload,
    /// UploadPartCopy) may answer 200 with an `<Error>` document, which is thrown as such.
    func document(
        _ method: String, key: String?, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
        body: Body = .none, timeout: Duration? = nil
    ) async throws(S3Error) -> (S3XML, StreamingResponse) {
        let response = try await send(method, key: key, query: query, headers: headers, body: body, timeout: timeout)
        let bytes: [UInt8]
        do { bytes = try await response.body.collect(upTo: 16 << 20) } catch let error as TransportError {
            throw S3Error.from(error)
        } catch {
            throw S3Error(.other, message: "\(error)")
        }
        guard let root = S3XML.parse(bytes) else {
            throw S3Error(.other, status: response.status, message: "unreadable XML answer to \(method)")
        }
        if root.name == "Error" { throw S3Error.from(status: response.status == 200 ? 500 : response.status, body: bytes) }
        return (root, response)
    }

    /// Discards a response body (answers we do not need), so the connection can be reused.
    func drain(_ response: StreamingResponse) async throws(S3Error) {
        do { _ = try await response.body.collect(upTo: 1 << 20) } catch let error as TransportError {
            throw S3Error.from(error)
        } catch {
            throw S3Error(.other, message: "\(error)")
        }
    }

    /// The `Host` value and encoded path for `key` under the configured addressing.
    func hostAndPath(key: String?) -> (host: String, path: String) {
        let keyPath = key.map { "/" + URIEncoding.path($0) } ?? ""
        switch settings.addressing {
        case .path: return (authority, "/\(settings.bucket)" + keyPath)
        case .virtualHost: return ("\(settings.bucket).\(authority)", keyPath.isEmpty ? "/" : keyPath)
        }
    }
}
