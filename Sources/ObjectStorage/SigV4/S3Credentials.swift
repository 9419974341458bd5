/// An access key pair for an S3-compatible store; the secret never appears in a description, a
/// log line or an error.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible {
    /// The access key id, sent in every `Authorization` header (not a secret).
    public var accessKeyId: String
    /// The secret access key, only ever used as HMAC key material.
    public var secretAccessKey: String
    /// A temporary session token (STS), signed as `x-amz-security-token`; nil for long-term keys.
    public var sessionToken: String?

    /// Creates credentials.
    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key id only.
    public var description: String { "S3Credentials(\(accessKeyId), secret redacted)" }
}
