import NativeCrypto

/// Finds the API client behind an `Authorization: Bearer <api key>` header.
///
/// Keys are known only as SHA-256 hashes (DESIGN.md, "Secrets"): the presented key is hashed
/// and looked up, so no plaintext key is ever held, and comparing fixed-size digests of a secret
/// leaks nothing useful about the secret through timing.
struct ClientDirectory: Sendable {
    private let clientsByKeyHash: [String: BizServerConfiguration.Client]

    init(_ clients: [BizServerConfiguration.Client]) {
        var index: [String: BizServerConfiguration.Client] = [:]
        for client in clients { index[client.apiKeySHA256] = client }
        clientsByKeyHash = index
    }

    /// The client whose API key is in `authorization`.
    func authenticate(authorization: String?) throws(BizError) -> BizServerConfiguration.Client {
        guard let key = Self.bearer(authorization) else { throw BizError.missingAPIKey }
        guard !key.isEmpty, key.utf8.count <= 512 else { throw BizError.badAPIKey }
        guard let client = clientsByKeyHash[BizServerConfiguration.apiKeyHash(key)] else { throw BizError.badAPIKey }
        return client
    }

    /// The credential of an `Authorization: Bearer …` header (scheme case-insensitive, spaces
    /// around it trimmed), nil without one; `""` for a bare `Bearer`.
    static func bearer(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: " ")
    }
}
