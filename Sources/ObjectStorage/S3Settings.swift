public import Basics

/// Where the object store is and how to reach it: the `"blobStore": {"type": "s3", ...}` object of
/// up-server's configuration (issue 12 §2). Every default is set in the initializer.
///
/// ```json
/// "blobStore": {"type": "s3", "endpoint": "http://127.0.0.1:8333", "region": "us-east-1",
///               "bucket": "upgate", "accessKeyId": "…", "secretAccessKey": "…"}
/// ```
/// `"payloadIntegrity": "sha256" | "crc32"` is optional: without it the endpoint's scheme
/// chooses (``payloadIntegrity``). The key pair may come from `UPGATE_S3_ACCESS_KEY_ID` /
/// `UPGATE_S3_SECRET_ACCESS_KEY` instead (``applyingEnvironment(_:)``), which is how production
/// should set it.
public struct S3Settings: Sendable {
    /// How the bucket appears in a request URL.
    public enum Addressing: String, Sendable {
        /// `http://host:port/bucket/key`: SeaweedFS, MinIO, Ceph RGW and R2 accept it; the default.
        case path
        /// `http://bucket.host:port/key`: what AWS S3 prefers for new buckets.
        case virtualHost = "virtual-host"
    }

    /// `http://` or `https://` plus host and optional port, nothing after it.
    public var endpoint: String
    /// The SigV4 region; stores that ignore regions accept any fixed one. Default `us-east-1`.
    public var region: String
    /// The bucket holding every blob.
    public var bucket: String
    /// The key pair (and session token, if temporary).
    public var credentials: S3Credentials
    /// Path-style or virtual-host addressing. Default ``Addressing/path``.
    public var addressing: Addressing
    /// The whole exchange of a small request (head, delete, list, multipart bookkeeping). Default 30 s.
    public var requestTimeout: Duration
    /// The whole exchange of a streamed put, part or get, body included. Default 10 minutes.
    public var transferTimeout: Duration
    /// How an object body sent from memory is protected on its way to the store; `nil` chooses by
    /// the endpoint's scheme: ``PayloadIntegrity/crc32`` over `https`, ``PayloadIntegrity/sha256``
    /// over `http` (the AWS SDKs make the same choice).
    public var payloadIntegrity: PayloadIntegrity?

    /// How `PutObject` bodies held in memory (every blob append) are protected in transit.
    public enum PayloadIntegrity: String, Sendable, CaseIterable {
        /// The body's SHA-256 is part of the signature (`x-amz-content-sha256`), so the store
        /// refuses a body changed on the way, by accident or on purpose. Costs a SHA-256 pass
        /// over every byte sent: on the order of the protocol's own SHA-1.
        case sha256
        /// The body goes as `UNSIGNED-PAYLOAD` with its CRC-32 in `x-amz-checksum-crc32`, a signed
        /// header the store checks against what it received (AWS, R2, MinIO and SeaweedFS refuse
        /// a mismatch). Catches corruption at a fraction of the cost; it does not stop a
        /// deliberate change, which is TLS's job, so it is the default only over `https`.
        case crc32
    }

    /// Creates settings; see each property for its meaning and default.
    public init(
        endpoint: String, region: String = "us-east-1", bucket: String, credentials: S3Credentials,
        addressing: Addressing = .path, requestTimeout: Duration = .seconds(30), transferTimeout: Duration = .seconds(600),
        payloadIntegrity: PayloadIntegrity? = nil
    ) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.credentials = credentials
        self.addressing = addressing
        self.requestTimeout = requestTimeout
        self.transferTimeout = transferTimeout
        self.payloadIntegrity = payloadIntegrity
    }

    /// The environment variable for the access key id.
    public static let accessKeyVariable = "UPGATE_S3_ACCESS_KEY_ID"
    /// The environment variable for the secret access key.
    public static let secretKeyVariable = "UPGATE_S3_SECRET_ACCESS_KEY"

    /// These settings with the key pair from `environment` when both variables are set (the
    /// environment wins over the file, as for every other secret: DESIGN.md "Secrets").
    public func applyingEnvironment(_ environment: [String: String]) -> S3Settings {
        var settings = self
        if let id = environment[Self.accessKeyVariable], !id.isEmpty,
           let secret = environment[Self.secretKeyVariable], !secret.isEmpty {
            settings.credentials = S3Credentials(accessKeyId: id, secretAccessKey: secret)
        }
        return settings
    }

    /// The scheme and authority of ``endpoint``, or why it cannot be used.
    func parsedEndpoint() throws(ConfigurationError) -> (scheme: String, authority: String) {
        for scheme in ["http", "https"] where endpoint.hasPrefix("\(scheme)://") {
            var authority = Substring(endpoint.dropFirst(scheme.count + 3))
            if authority.hasSuffix("/") { authority = authority.dropLast() }
            guard !authority.isEmpty, !authority.contains("/"), !authority.contains("?"), !authority.contains("@") else { break }
            return (scheme, String(authority))
        }
        throw ConfigurationError("blobStore.endpoint must be http:// or https:// plus host[:port], got \"\(endpoint)\"")
    }

    /// Checks every setting; the message names the key to fix (one actionable line).
    public func validate() throws(ConfigurationError) {
        _ = try parsedEndpoint()
        // S3 bucket names: 3-63 of lower-case letters, digits, '.', '-' (S3 user guide, bucket naming rules).
        let validBucket = (3...63).contains(bucket.utf8.count) && bucket.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D
        }
        guard validBucket else { throw ConfigurationError("blobStore.bucket \"\(bucket)\" is not a valid S3 bucket name (3-63 of a-z 0-9 . -)") }
        guard !region.isEmpty else { throw ConfigurationError("blobStore.region must not be empty") }
        guard !credentials.accessKeyId.isEmpty, !credentials.secretAccessKey.isEmpty else {
            throw ConfigurationError(
                "blobStore needs accessKeyId and secretAccessKey (or \(Self.accessKeyVariable) and \(Self.secretKeyVariable))")
        }
        guard requestTimeout > .zero, transferTimeout > .zero else { throw ConfigurationError("blobStore timeouts must be positive") }
    }
}
