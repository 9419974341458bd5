public import Basics
public import HTTPKit

/// `GET /healthz` and `GET /metrics`, the same on every server.
///
/// `/healthz` runs the service's check (a store round trip): `200 {"status":"ok"}`, or 503
/// `{"error": "<unavailable>"}` with the failure logged. `/metrics` renders the registry in
/// Prometheus text format after `refresh` (gauges read at scrape time); without `refresh` it is a
/// synchronous route (in-memory work only). Neither may be cached.
public struct OperationsRoutes: Sendable {
    /// The service's health check; throws when it is not healthy.
    public var check: @Sendable () async throws -> Void
    /// The 503 message, e.g. `store unavailable`.
    public var unavailable: String
    /// The registry `/metrics` renders.
    public var registry: Metrics
    /// Updates gauges before rendering (nil: nothing to update).
    public var refresh: (@Sendable () async -> Void)?

    /// Creates the routes.
    public init(
        check: @escaping @Sendable () async throws -> Void, unavailable: String, registry: Metrics,
        refresh: (@Sendable () async -> Void)? = nil
    ) {
        self.check = check
        self.unavailable = unavailable
        self.registry = registry
        self.refresh = refresh
    }

    /// Registers both routes.
    public func register(on router: inout Router) {
        let check = self.check
        let unavailable = self.unavailable
        router.get("/healthz") { _, context in
            do {
                try await check()
            } catch {
                context.logger.error(
                    "health check failed", ["reqid": .string(context.requestID), "error": .string("\(error)")])
                return Response.error(status: 503, message: unavailable)
            }
            return Response.json(raw: Array(#"{"status":"ok"}"#.utf8), headers: ["Cache-Control": "no-store"])
        }
        let registry = self.registry
        if let refresh {
            router.get("/metrics") { _, _ in
                await refresh()
                return Self.render(registry)
            }
        } else {
            router.getSync("/metrics") { _, _ in Self.render(registry) }
        }
    }

    static func render(_ registry: Metrics) -> Response {
        Response(
            status: 200,
            headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
            body: Array(registry.render().utf8))
    }
}
