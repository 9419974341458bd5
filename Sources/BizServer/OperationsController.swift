import Basics
import HTTPKit

/// `GET /healthz` and `GET /metrics`.
struct OperationsController: Sendable {
    let store: any UploadRecordStore
    let metrics: BizMetrics

    func register(on router: inout Router) {
        router.get("/healthz") { _, context in
            do {
                // An indexed point lookup: proves the store answers without scanning it.
                _ = try await store.upload(id: "healthz")
            } catch {
                metrics.storeErrors.increment()
                context.logger.error("health check: store failed", ["error": .string("\(error)")])
                return Response.error(status: 503, message: "store unavailable")
            }
            return Response.json(raw: Array(#"{"status":"ok"}"#.utf8), headers: ["Cache-Control": "no-store"])
        }
        // Synchronous: rendering counters is in-memory work (the health check above reads the store).
        router.getSync("/metrics") { _, _ in
            Response(
                status: 200,
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                body: Array(metrics.registry.render().utf8))
        }
    }
}
