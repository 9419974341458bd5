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
        guard let authorization else { throw BizError.missingAPIKey }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw BizError.missingAPIKey }
        let key = parts[1].trimmingCharacters(in: " ")
        guard !key.isEmpty, key.utf8.count <= 512 else { throw BizError.badAPIKey }
        guard let client = clientsByKeyHash[BizServerConfiguration.apiKeyHash(key)] else { throw BizError.badAPIKey }
        return client
    }
}
