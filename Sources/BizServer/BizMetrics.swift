import Basics

/// Biz-server's own metric families (`GET /metrics`), declared once; the HTTP ones are the
/// shell's (`HTTPMetrics`, prefix `upgate_biz`).
struct BizMetrics: Sendable {
    let registry: Metrics
    let tokensIssued: Counter
    let tokensRefused: Counter
    let callbacksAccepted: Counter
    let callbacksDuplicate: Counter
    let callbacksRejected: Counter
    let storeErrors: Counter
    let jwksFetches: Counter
    let adminRequests: Counter
    let apiKeysCreated: Counter
    let apiKeysRevoked: Counter
    let apiKeyPolls: Counter
    let webhookDeliveries: Counter
    let webhooksPending: Gauge
    let webhooksDead: Gauge
    let webhookEndpointsDisabled: Gauge

    init(_ registry: Metrics) {
        self.registry = registry
        tokensIssued = registry.counter("upgate_biz_tokens_issued_total", "Upload tokens issued.", labels: ["client"])
        tokensRefused = registry.counter(
            "upgate_biz_tokens_refused_total", "Token requests refused, by reason (jwt_* for end users' JWTs).", labels: ["reason"])
        callbacksAccepted = registry.counter(
            "upgate_biz_callbacks_accepted_total", "Verified callbacks that created an upload record.")
        callbacksDuplicate = registry.counter(
            "upgate_biz_callbacks_duplicate_total", "Verified callbacks for an already recorded upload (redeliveries).")
        callbacksRejected = registry.counter(
            "upgate_biz_callbacks_rejected_total", "Callbacks refused, by reason.", labels: ["reason"])
        storeErrors = registry.counter("upgate_biz_store_errors_total", "Upload store operations that failed.")
        jwksFetches = registry.counter(
            "upgate_biz_jwks_fetches_total", "Fetches of the jwt.jwksURL key set, by outcome (ok, failed).",
            labels: ["outcome"])
        adminRequests = registry.counter(
            "upgate_biz_admin_requests_total", "Admin API requests, by operation and outcome (ok or the error's name).",
            labels: ["operation", "outcome"])
        apiKeysCreated = registry.counter(
            "upgate_biz_api_keys_created_total", "Stored API keys this server has seen appear (admin API or keys create).")
        apiKeysRevoked = registry.counter(
            "upgate_biz_api_keys_revoked_total", "Stored API keys this server has seen revoked (admin API or keys revoke).")
        apiKeyPolls = registry.counter(
            "upgate_biz_api_key_polls_total", "Checks of the API key store for changes, by outcome (ok, failed).",
            labels: ["outcome"])
        webhookDeliveries = registry.counter(
            "upgate_biz_webhook_deliveries_total",
            "Webhook delivery attempts, by outcome (delivered, failed: will be retried or is dead, gone: 410 disabled the endpoint, abandoned: endpoint disabled or removed).",
            labels: ["outcome"])
        webhooksPending = registry.gauge(
            "upgate_biz_webhook_deliveries_pending", "Webhook deliveries still to be delivered (waiting or being attempted).")
        webhooksDead = registry.gauge(
            "upgate_biz_webhook_deliveries_dead", "Webhook deliveries given up on after their last attempt (re-queueable).")
        webhookEndpointsDisabled = registry.gauge(
            "upgate_biz_webhook_endpoints_disabled", "Webhook endpoints this server stopped sending to after a 410 Gone.")
    }
}
