import Basics
import HTTPKit
import Outbox
import UpCore

/// `GET /admin/outbox?state=<state>&limit=<n>[&before=<id>]`: the callback outbox for operators,
/// authorised like the management reads (`ManagementAuthenticator`), newest first.
///
/// States: `pending` — every callback still to be delivered, waiting or being attempted now
/// (`claimed`, listed with its owner and lease); `claimed` alone; `delivered`; `dead` — given up
/// on after the last attempt, kept for this view (`failed` is accepted as its older name). The
/// default is `pending`. URLs are shown without their query (it may carry a token); bodies never.
///
/// `POST /admin/outbox/<id>/requeue` moves a dead entry back to pending, due now, with a fresh
/// retry schedule (the retrier delivers it at its next poll) and answers the entry as listed;
/// `612 no such dead outbox entry` when `id` is unknown or not dead, 400 when it is not a number.
struct OutboxAdminController: Sendable {
    /// Largest page.
    static let maxListLimit = 1000

    let outbox: any OutboxStore
    let authenticator: ManagementAuthenticator
    let clock: any WallClock

    /// Adds the routes.
    func register(on router: inout UpRouter) {
        router.get("/admin/outbox") { request, _ in try await self.list(request) }
        router.post("/admin/outbox/:id/requeue") { request, _ in try await self.requeue(request) }
    }

    /// The re-queue request.
    func requeue(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        guard let text = request.parameters["id"], let id = Int64(text), id > 0 else {
            throw UpError(.badRequest, detail: "outbox id must be a positive number")
        }
        guard let entry = try await outbox.requeue(id, now: clock.unixSeconds) else {
            throw UpError(.noSuchDeadEntry, detail: "outbox entry \(id)")
        }
        return Response.json(raw: Self.json(for: entry).serializedBytes(), headers: ["Cache-Control": "no-store"])
    }

    /// What a `state` parameter lists, and the name the answer gives it.
    static func phases(_ state: String) -> (name: String, phases: Set<OutboxDelivery.Phase>)? {
        switch state {
        case "pending": ("pending", [.pending, .claimed])
        case "claimed": ("claimed", [.claimed])
        case "delivered": ("delivered", [.delivered])
        case "dead", "failed": ("dead", [.dead])
        default: nil
        }
    }

    /// The listing.
    func list(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        guard let (name, phases) = Self.phases(request.queryItem("state") ?? "pending") else {
            throw UpError(.badRequest, detail: "state must be pending, claimed, delivered or dead")
        }
        let limit = try Self.positive(request, "limit") ?? 100
        let before = try Self.positive(request, "before").map(Int64.init)
        let entries = try await outbox.list(phases, before: before, limit: min(limit, Self.maxListLimit))
        let body = JSONValue.object([("state", .string(name)), ("items", .array(entries.map(Self.json(for:))))])
        return Response.json(raw: body.serializedBytes(), headers: ["Cache-Control": "no-store"])
    }

    /// The query parameter `name` as a positive integer; nil when absent, 400 when not one.
    private static func positive(_ request: Request, _ name: String) throws(UpError) -> Int? {
        guard let text = request.queryItem(name) else { return nil }
        guard let value = Int(text), value > 0 else { throw UpError(.badRequest, detail: "\(name) must be > 0") }
        return value
    }

    /// One entry for the listing.
    static func json(for entry: OutboxEntry) -> JSONValue {
        let message = try? CallbackMessage(payload: entry.payload)
        var members: [(key: String, value: JSONValue)] = [("id", .int(entry.id))]
        if let message {
            members += [("bucket", .string(message.bucket)), ("key", .string(message.key)), ("hash", .string(message.etag))]
        }
        members += [("state", .string(entry.delivery.state.phase.rawValue)), ("attempts", .int(Int64(entry.attempts)))]
        switch entry.delivery.state {
        case .pending(let dueAt): members.append(("nextAttemptAt", .int(dueAt)))
        case .claimed(let owner, let leaseUntil): members += [("owner", .string(owner)), ("leaseUntil", .int(leaseUntil))]
        case .delivered, .dead: break
        }
        if let message {
            members.append(("urls", .array(message.request.urls.map { .string(CallbackURL.redacted($0)) })))
        }
        if let error = entry.lastError { members.append(("lastError", .string(error))) }
        if let reply = entry.reply { members.append(("reply", .string(reply))) }
        return .object(members)
    }
}
