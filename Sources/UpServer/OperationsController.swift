import Basics
import HTTPKit
import Outbox
import UpCore

/// `GET /healthz` and `GET /metrics`.
struct OperationsController: Sendable {
    /// The callback outbox, whose depth is reported (and is the index's health check).
    let outbox: any OutboxStore
    let metrics: UpMetrics

    func register(on router: inout UpRouter) {
        router.get("/healthz") { _, context in
            do {
                metrics.outboxDepth.set(Double(try await outbox.depth()))
            } catch {
                context.logger.error("health check: index failed", ["error": .string("\(error)")])
                throw UpError(.indexUnavailable, detail: "\(error)")
            }
            return Response.json(raw: Array(#"{"status":"ok"}"#.utf8), headers: ["Cache-Control": "no-store"])
        }
        router.get("/metrics") { _, _ in
            if let depth = try? await outbox.depth() { metrics.outboxDepth.set(Double(depth)) }
            return Response(
                status: 200,
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                body: Array(metrics.registry.render().utf8))
        }
    }
}
