import Basics
import HTTPKit

/// `GET /healthz` and `GET /metrics`.
struct OperationsController: Sendable {
    let services: UpServices

    func register(on router: inout Router) {
        router.get("/healthz") { _, context in
            do {
                services.metrics.outboxDepth.set(Double(try await services.index.outboxDepth()))
            } catch {
                context.logger.error("health check: index failed", ["error": .string("\(error)")])
                return Response.error(status: 503, message: "index unavailable")
            }
            return Response.json(raw: Array(#"{"status":"ok"}"#.utf8), headers: ["Cache-Control": "no-store"])
        }
        router.get("/metrics") { _, _ in
            if let depth = try? await services.index.outboxDepth() { services.metrics.outboxDepth.set(Double(depth)) }
            return Response(
                status: 200,
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                body: Array(services.metrics.registry.render().utf8))
        }
    }
}
