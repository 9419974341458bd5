import NativeCrypto
import Synchronization

/// AWS Signature Version 4 for the `Authorization` header: pure functions of the request, the
/// credentials and a time passed in.
///
/// The steps and their names follow AWS's "Create a signed AWS API request" (IAM user guide) and
/// the S3 API reference's "Signature Calculations for the Authorization Header": canonical
/// request → string to sign → signing key (`AWS4`+secret, HMAC-chained through date, region,
/// service, `aws4_request`) → signature. Tested against AWS's published test suite and the S3
/// examples (`Tests/ObjectStorageTests/SigV4SignerTests.swift`).
public struct SigV4Signer: Sendable {
    /// The algorithm name written into the string to sign and the header.
    public static let algorithm = "AWS4-HMAC-SHA256"
    /// `x-amz-content-sha256` for a body that is streamed and not hashed before it is sent
    /// (S3 API reference, "Signature Calculations for the Authorization Header": unsigned payload).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of the empty string, the payload hash of a request without a body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The parts of a request that are signed.
    public struct Request: Sendable {
        /// The method, e.g. `PUT`.
        public var method: String
        /// The path as sent, already encoded with ``URIEncoding/path(_:)``; `/` for the root.
        public var encodedPath: String
        /// Query parameters, not encoded (they are encoded here and in the URL alike).
        public var query: [(name: String, value: String)]
        /// Header fields to sign, `host` among them; names in any case.
        public var headers: [(name: String, value: String)]
        /// The lower-case hex SHA-256 of the body, or ``SigV4Signer/unsignedPayload``.
        public var payloadHash: String

        /// Creates a request description.
        public init(
            method: String, encodedPath: String, query: [(name: String, value: String)] = [],
            headers: [(name: String, value: String)], payloadHash: String
        ) {
            self.method = method
            self.encodedPath = encodedPath
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The key pair.
    public var credentials: S3Credentials
    /// The region in the scope, e.g. `us-east-1` (SeaweedFS and MinIO accept any fixed one).
    public var region: String
    /// The service in the scope: `s3` for object stores.
    public var service: String

    /// The last signing key made, shared by copies of this signer: the key changes once a day,
    /// and deriving it is four of a request's five HMACs (~1 % of up-server's CPU per small
    /// upload on S3). Keyed by everything it is derived from, so a changed credential or scope
    /// is never signed with an old key.
    private let lastKey = LastSigningKey()

    /// Creates a signer.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The canonical query string: each name and value encoded, sorted by name then value (byte
    /// order of the encoded forms), every pair written `name=value` even when the value is empty.
    /// (libcurl 7.88's own SigV4 gets the last two wrong: research A2.)
    public static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { (URIEncoding.component($0.name), URIEncoding.component($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// The canonical request and the `SignedHeaders` list.
    ///
    /// Header names are lower-cased and sorted; each value is trimmed and its runs of spaces
    /// collapsed to one; repeated fields are joined with `,` in the order given.
    public static func canonicalRequest(_ request: Request) -> (text: String, signedHeaders: String) {
        var grouped: [String: [String]] = [:]
        for (name, value) in request.headers {
            grouped[name.lowercased(), default: []].append(trimAll(value))
        }
        let names = grouped.keys.sorted()
        let headerLines = names.map { "\($0):\(grouped[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [
            request.method, request.encodedPath, canonicalQuery(request.query), headerLines, signedHeaders,
            request.payloadHash,
        ].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// `date/region/service/aws4_request`.
    public func scope(at time: SigV4Timestamp) -> String {
        "\(time.date)/\(region)/\(service)/aws4_request"
    }

    /// The string to sign: algorithm, timestamp, scope and the hex SHA-256 of the canonical request.
    public func stringToSign(canonicalRequest: String, at time: SigV4Timestamp) -> String {
        let hash = Hex.encode(SHA256.hash(Array(canonicalRequest.utf8)))
        return [Self.algorithm, time.amzDate, scope(at: time), hash].joined(separator: "\n")
    }

    /// The signing key for `date` (`YYYYMMDD`): valid for every request of that day.
    public func signingKey(for date: String) -> [UInt8] {
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for element in [date, region, service, "aws4_request"] {
            key = HMAC(.sha256, key: key).authenticationCode(for: Array(element.utf8))
        }
        return key
    }

    /// The lower-case hex signature of `stringToSign`.
    public func signature(of stringToSign: String, at time: SigV4Timestamp) -> String {
        let inputs = LastSigningKey.Inputs(
            date: time.date, region: region, service: service, secret: credentials.secretAccessKey)
        let key = lastKey.key(for: inputs) { signingKey(for: time.date) }
        return Hex.encode(HMAC(.sha256, key: key).authenticationCode(for: Array(stringToSign.utf8)))
    }

    /// The `Authorization` header value for `request` as given (its headers must already hold
    /// everything to be signed: `host`, `x-amz-date`, ...).
    public func authorization(for request: Request, at time: SigV4Timestamp) -> String {
        let (canonical, signedHeaders) = Self.canonicalRequest(request)
        let signature = signature(of: stringToSign(canonicalRequest: canonical, at: time), at: time)
        return "\(Self.algorithm) Credential=\(credentials.accessKeyId)/\(scope(at: time)), "
            + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The headers to send for an S3 request: `request.headers` plus `x-amz-date`,
    /// `x-amz-content-sha256` (S3 requires it on every request, and it must equal the payload
    /// hash signed), `x-amz-security-token` with temporary credentials, and `Authorization`.
    public func signedHeaders(for request: Request, at time: SigV4Timestamp) -> [(name: String, value: String)] {
        var signed = request
        signed.headers.append(("x-amz-date", time.amzDate))
        signed.headers.append(("x-amz-content-sha256", request.payloadHash))
        if let token = credentials.sessionToken { signed.headers.append(("x-amz-security-token", token)) }
        return signed.headers + [("Authorization", authorization(for: signed, at: time))]
    }

    /// Trims leading and trailing spaces and tabs and collapses inner runs to one space
    /// ("Trimall" in the IAM guide; the test suite collapses inside quotes too).
    static func trimAll(_ value: String) -> String {
        var out: [UInt8] = []
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == 0x20 || byte == 0x09 {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// One signing key and what it was derived from (``SigV4Signer``'s cache).
private final class LastSigningKey: Sendable {
    /// Everything a signing key is derived from.
    struct Inputs: Equatable {
        var date: String
        var region: String
        var service: String
        var secret: String
    }

    private let entry = Mutex<(inputs: Inputs, key: [UInt8])?>(nil)

    /// The key for `inputs`: the one kept if it was made from the same, else `make()`'s, kept.
    func key(for inputs: Inputs, make: () -> [UInt8]) -> [UInt8] {
        if let kept = entry.withLock({ $0 }), kept.inputs == inputs { return kept.key }
        let key = make()
        entry.withLock { $0 = (inputs, key) }
        return key
    }
}
