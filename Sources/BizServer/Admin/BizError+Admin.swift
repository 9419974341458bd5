/// The rows of the `BizError` table for stored API keys, the admin API and the per-address
/// limit (issue 11 §3); in their own file to keep the shared one small.
extension BizError {
    // MARK: API keys

    /// A stored key whose `expiresAt` has come. Only a holder of the key learns this.
    public static let expiredAPIKey = BizError(401, "expired_api_key", "API key expired")

    // MARK: Admin API

    /// No admin credential is configured, so `/v1/admin/…` refuses everyone.
    public static let adminDisabled = BizError(
        401, "admin_disabled", "admin API disabled: set UPGATE_ADMIN_TOKEN or adminTokenSHA256")
    /// No `Authorization: Bearer <admin token>` header.
    public static let missingAdminToken = BizError(401, "missing_admin_token", "missing admin token")
    /// The bearer is not the admin token.
    public static let badAdminToken = BizError(401, "bad_admin_token", "bad admin token")
    /// No stored key has this id.
    public static let keyNotFound = BizError(404, "key_not_found", "no such key")
    /// The key comes from the configuration (file or `UPGATE_API_KEYS`) and is changed there.
    public static let keyReadOnly = BizError(
        409, "key_read_only", "this key comes from the configuration; change it there")
    /// The key store failed (or the server has none); retry.
    public static let keyStoreUnavailable = BizError(
        503, "key_store_unavailable", "API key store unavailable, retry later")

    // MARK: Per-address limit

    /// The client address's token bucket (`addressRateLimit`) is empty.
    public static func addressRateLimited(retryAfter: Int) -> BizError {
        BizError(429, "address_rate_limited", "too many requests from this address", retryAfter: retryAfter)
    }
}
