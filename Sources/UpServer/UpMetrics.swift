import Basics
import HTTPKit

/// Up-server's metric families (`GET /metrics`), declared once.
struct UpMetrics: Sendable {
    let registry: Metrics
    let bytesReceived: Counter
    let chunks: Counter
    let uploadsStarted: Counter
    let uploadsCompleted: Counter
    let uploadsExpired: Counter
    let orphansRemoved: Counter
    let errors: Counter
    let callbackAttempts: Counter
    let callbackFailures: Counter
    let outboxDepth: Gauge

    init(_ registry: Metrics) {
        self.registry = registry
        bytesReceived = registry.counter("upgate_up_bytes_received_total", "Upload payload bytes stored.")
        chunks = registry.counter("upgate_up_chunks_total", "Chunks (mkblk/bput bodies, v2 parts) stored.")
        uploadsStarted = registry.counter(
            "upgate_up_uploads_started_total", "Uploads started, by protocol.", labels: ["protocol"])
        uploadsCompleted = registry.counter(
            "upgate_up_uploads_completed_total", "Objects created, by protocol.", labels: ["protocol"])
        uploadsExpired = registry.counter(
            "upgate_up_uploads_expired_total", "Blocks and multipart uploads removed by the sweeper after expiry.")
        orphansRemoved = registry.counter(
            "upgate_up_orphan_blobs_removed_total", "Store blobs no row named, removed by the sweeper after orphanGraceSeconds.")
        errors = registry.counter("upgate_up_errors_total", "Error responses, by status.", labels: ["status"])
        callbackAttempts = registry.counter("upgate_up_callback_attempts_total", "Callback deliveries tried.")
        callbackFailures = registry.counter("upgate_up_callback_failures_total", "Callback deliveries that failed.")
        outboxDepth = registry.gauge("upgate_up_outbox_depth", "Callbacks not yet delivered (pending).")
    }

    /// Feeds HTTP response events into the 4xx/5xx counter (latency and responses by route are
    /// the shell's `HTTPMetrics`, prefix `upgate_up`).
    func observe(_ event: ResponseEvent) {
        if event.status >= 400 { errors.increment([String(event.status)]) }
    }
}
