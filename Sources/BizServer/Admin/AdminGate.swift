import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// The guard in front of every `/v1/admin/…` route: the per-address limit (when configured), then
/// the admin token; around the handler, one metric and one access-log outcome per request.
///
/// The token is known only as its SHA-256 (from `adminTokenSHA256`, or `UPGATE_ADMIN_TOKEN`
/// hashed at load). The presented token is hashed and the two digests are compared in constant
/// time: the digest's length is public, and nothing about the token leaks through timing.
struct AdminGate: Sendable {
    private let tokenSHA256: [UInt8]?
    private let addresses: AddressLimiter?
    private let clock: any WallClock
    private let metrics: BizMetrics

    init(access: BizServerConfiguration.Access, clock: any WallClock, metrics: BizMetrics) {
        tokenSHA256 = access.adminTokenSHA256.flatMap { Hex.decode($0) }
        addresses = access.addressRateLimit.map(AddressLimiter.init)
        self.clock = clock
        self.metrics = metrics
    }

    /// Checks `authorization` against the admin token.
    func authenticate(_ authorization: String?) throws(BizError) {
        guard let expected = tokenSHA256 else { throw BizError.adminDisabled }
        guard let token = ClientDirectory.bearer(authorization) else { throw BizError.missingAdminToken }
        guard !token.isEmpty, token.utf8.count <= 512,
            ConstantTime.equals(SHA256.hash(Array(token.utf8)), expected)
        else { throw BizError.badAdminToken }
    }

    /// Runs `handler` for `request` if it may, as `operation` (`"keys.create"`): counted in
    /// `upgate_biz_admin_requests_total` and logged on the access-log line with its outcome.
    func run(
        _ operation: String, _ request: Request, _ context: RequestContext,
        _ handler: () async throws(BizError) -> Response
    ) async throws(BizError) -> Response {
        do {
            try addresses?.take(request.remoteAddress, now: clock.now())
            try authenticate(request.headers["Authorization"])
            let response = try await handler()
            metrics.adminRequests.increment([operation, "ok"])
            context.addLogFields(["event": "admin", "operation": .string(operation), "outcome": "ok"])
            return response
        } catch {
            metrics.adminRequests.increment([operation, error.name])
            context.addLogFields([
                "event": "admin", "operation": .string(operation), "outcome": .string(error.name),
                "detail": .string(error.detail),
            ])
            throw error
        }
    }
}
