import UpCore

/// Checks upload tokens in the order of qiniu-protocol.md §1.2: present, well-formed and signed
/// by a known AccessKey, not expired, for a bucket that exists.
struct UploadAuthorizer: Sendable {
    let keys: KeyRing
    let buckets: Set<String>

    /// A token from an `Authorization: UpToken <token>` header (resumable uploads).
    func authorize(header: String?, now: Int64) throws(UpError) -> UpToken {
        let token = try UpToken.token(fromAuthorization: header)
        return try authorize(token: token, now: now)
    }

    /// A token from the form's `token` field; absent → `401 token not specified` (§1.2 step 1).
    func authorize(formToken: String?, now: Int64) throws(UpError) -> UpToken {
        guard let formToken, !formToken.isEmpty else { throw UpError(.tokenNotSpecified) }
        return try authorize(token: formToken, now: now)
    }

    private func authorize(token: String, now: Int64) throws(UpError) -> UpToken {
        let verified = try UpToken.verify(token, keys: keys, now: now)
        guard buckets.contains(verified.policy.bucket) else {
            throw UpError(.noSuchBucket, detail: verified.policy.bucket)
        }
        return verified
    }
}
