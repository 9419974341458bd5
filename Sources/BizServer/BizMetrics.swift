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
    }
}
