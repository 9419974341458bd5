import Foundation
import NativeCrypto

/// Signs webhook deliveries as Standard Webhooks 1.0 asks: for each secret,
/// `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>` with the key the
/// base64-decoded text after `whsec_`; several signatures are joined by spaces, so a receiver
/// that knows any one of the secrets accepts the delivery (rotation with overlap).
struct WebhookSigner: Sendable {
    /// The prefix of every secret.
    static let secretPrefix = "whsec_"
    /// Fewest key bytes accepted (the spec's secrets are 24…64 bytes).
    static let minimumKeyBytes = 16

    private let macs: [HMAC]

    /// A signer for `secrets`, nil if one is not `whsec_` + base64 of at least 16 bytes.
    init?(secrets: [String]) {
        var macs: [HMAC] = []
        for secret in secrets {
            guard let key = Self.key(secret) else { return nil }
            macs.append(HMAC(.sha256, key: key))
        }
        guard !macs.isEmpty else { return nil }
        self.macs = macs
    }

    /// The key bytes of one secret, nil if it is malformed.
    static func key(_ secret: String) -> [UInt8]? {
        guard secret.hasPrefix(secretPrefix) else { return nil }
        guard let data = Data(base64Encoded: String(secret.dropFirst(secretPrefix.count))),
            data.count >= minimumKeyBytes
        else { return nil }
        return Array(data)
    }

    /// The `webhook-signature` header value for one attempt.
    func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        let prefix = Array("\(id).\(timestamp).".utf8)
        return macs.map { mac in
            "v1," + Data(mac.authenticationCode(forParts: [prefix, body])).base64EncodedString()
        }.joined(separator: " ")
    }
}
