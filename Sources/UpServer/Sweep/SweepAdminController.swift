import Basics
import HTTPKit
import UpCore

/// `POST /admin/sweep`: one sweep pass now, on this instance — expired blocks and uploads,
/// objects past `deleteAfterDays`, orphan blobs older than `orphanGraceSeconds` — answered as
/// `{"blocks":n,"uploads":n,"objects":n,"orphans":n}` (`SweepReport`).
///
/// Authorised like `/admin/outbox` (`ManagementAuthenticator`: QBox or Qiniu signature of an
/// up-server key pair; 401 `bad token` otherwise), never a browser path. For operators and chaos
/// suites that check "no orphans after a sweep" without waiting for `sweepIntervalSeconds`. A
/// failing store or index answers as any request does (503 `store unavailable`, …); the pass
/// may have removed part of what it found, the next one finds the rest.
struct SweepAdminController: Sendable {
    let sweeper: SweeperTask
    let authenticator: ManagementAuthenticator
    let clock: any WallClock

    /// Adds the route.
    func register(on router: inout UpRouter) {
        router.post("/admin/sweep") { request, _ in try await self.sweep(request) }
    }

    /// The sweep request.
    func sweep(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        let report = try await sweeper.pass()
        return Response.json(raw: report.json.serializedBytes(), headers: ["Cache-Control": "no-store"])
    }
}
