/// The rows of the `BizError` table for the webhook admin endpoints (issue 11 §2).
extension BizError {
    /// No webhook delivery has this id.
    public static let deliveryNotFound = BizError(404, "delivery_not_found", "no such webhook delivery")
    /// Only a dead delivery can be re-queued.
    public static let deliveryNotDead = BizError(
        409, "delivery_not_dead", "only a dead delivery can be re-queued; this one is still pending or delivered")
    /// The configuration lists no webhook (or none with the URL asked for).
    public static let webhookNotFound = BizError(404, "webhook_not_found", "no such webhook in the configuration")
    /// The delivery table failed; retry.
    public static let webhookStoreUnavailable = BizError(
        503, "webhook_store_unavailable", "webhook delivery store unavailable, retry later")
}
