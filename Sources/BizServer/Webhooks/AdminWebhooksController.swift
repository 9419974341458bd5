import Basics
import HTTPKit
import Outbox
import UpCore

/// The webhook admin endpoints, behind the admin token (`AdminGate`) like `/v1/admin/keys`:
///
/// - `GET /v1/admin/webhooks/deliveries?state=pending|delivered|dead[&limit=N][&before=ID]` →
///   `{"state", "items": [Delivery…]}`, newest first (`pending` includes those being attempted)
/// - `POST /v1/admin/webhooks/deliveries/{id}/retry` → the re-queued `Delivery` (dead ones only;
///   its endpoint, if a 410 disabled it, is enabled again)
/// - `POST /v1/admin/webhooks/test` with an optional `{"url": …}` → `{"items": [Delivery…]}`:
///   a `webhook.test` event sent now to that endpoint (default: every one), as it stands after
///   the attempt
struct AdminWebhooksController: Sendable {
    /// Largest page.
    static let maxListLimit = 1000
    /// Largest accepted request body.
    static let maxBodyBytes = 4 << 10

    let gate: AdminGate
    let dispatcher: WebhookDispatcher
    let endpoints: [WebhookEndpoint]

    func register(on router: inout Router) {
        router.get("/v1/admin/webhooks/deliveries") { request, context in
            try await gate.run("webhooks.list", request, context) { () throws(BizError) in try await list(request) }
        }
        router.post("/v1/admin/webhooks/deliveries/:id/retry", body: .collect(maxBytes: Self.maxBodyBytes)) {
            request, context in
            try await gate.run("webhooks.retry", request, context) { () throws(BizError) in try await retry(request) }
        }
        router.post("/v1/admin/webhooks/test", body: .collect(maxBytes: Self.maxBodyBytes)) { request, context in
            try await gate.run("webhooks.test", request, context) { () throws(BizError) in try await test(request) }
        }
    }

    func list(_ request: Request) async throws(BizError) -> Response {
        var state = "pending"
        var limit = 100
        var before: Int64?
        var seen = Set<String>()
        for (name, value) in request.queryItems {
            guard seen.insert(name).inserted else { throw .invalidRequest("query parameter '\(name)' given twice") }
            switch name {
            case "state": state = value
            case "limit": limit = try Self.positive(name, value)
            case "before": before = Int64(try Self.positive(name, value))
            default: throw .invalidRequest("unknown query parameter '\(name)'")
            }
        }
        let phases: Set<OutboxDelivery.Phase>
        switch state {
        case "pending": phases = [.pending, .claimed]
        case "delivered": phases = [.delivered]
        case "dead": phases = [.dead]
        default: throw .invalidRequest("state must be pending, delivered or dead")
        }
        let entries: [OutboxEntry]
        do {
            entries = try await dispatcher.store.list(phases, before: before, limit: min(limit, Self.maxListLimit))
        } catch {
            throw .webhookStoreUnavailable
        }
        return Self.json(.object([("state", .string(state)), ("items", .array(entries.map(Self.json(for:))))]))
    }

    func retry(_ request: Request) async throws(BizError) -> Response {
        guard let text = request.parameters["id"], let id = Int64(text), id > 0, text.utf8.count <= 19 else {
            throw .deliveryNotFound
        }
        let requeued: OutboxEntry?
        do {
            requeued = try await dispatcher.requeue(id)
            if requeued == nil, try await dispatcher.store.entry(id: id) != nil { throw BizError.deliveryNotDead }
        } catch let error as BizError {
            throw error
        } catch {
            throw .webhookStoreUnavailable
        }
        guard let requeued else { throw .deliveryNotFound }
        return Self.json(Self.json(for: requeued))
    }

    func test(_ request: Request) async throws(BizError) -> Response {
        let url = try Self.testURL(request.body)
        let targets = endpoints.filter { url == nil || $0.url == url }
        guard !targets.isEmpty else { throw .webhookNotFound }
        var items: [JSONValue] = []
        for endpoint in targets {
            do {
                items.append(Self.json(for: try await dispatcher.sendTest(to: endpoint)))
            } catch {
                throw .webhookStoreUnavailable
            }
        }
        return Self.json(.object([("items", .array(items))]))
    }

    /// The optional body of the test request: empty, `{}` or `{"url": "<a webhooks[] url>"}`.
    static func testURL(_ body: [UInt8]) throws(BizError) -> String? {
        guard !body.isEmpty else { return nil }
        guard let json = try? JSONValue.parse(body), case .object(let members) = json else {
            throw .invalidRequest("body must be empty or a JSON object {\"url\": …}")
        }
        var url: String?
        for (index, (name, value)) in members.enumerated() {
            guard name == "url", index == 0 else { throw .invalidRequest("unknown or repeated member '\(name)'") }
            switch value {
            case .null: url = nil
            case .string(let text): url = text
            default: throw .invalidRequest("url must be a string")
            }
        }
        return url
    }

    /// One delivery for the listings: id, webhookId, type, url (without its query), state,
    /// attempts, when the next attempt is due (pending), the last status and error, createdAt.
    static func json(for entry: OutboxEntry) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .int(entry.id))]
        if let message = try? WebhookMessage(payload: entry.payload) {
            members += [
                ("webhookId", .string(message.webhookID)), ("type", .string(message.type)),
                ("url", .string(WebhookTarget.redacted(message.endpoint))),
            ]
        }
        let state = entry.delivery.state
        members += [
            ("state", .string(state.phase == .claimed ? "pending" : state.phase.rawValue)),
            ("attempts", .int(Int64(entry.attempts))),
        ]
        switch state {
        case .pending(let dueAt): members.append(("nextAttemptAt", .int(dueAt)))
        case .claimed(_, let leaseUntil): members += [("attempting", .bool(true)), ("leaseUntil", .int(leaseUntil))]
        case .delivered, .dead: break
        }
        let last = entry.reply ?? entry.lastError
        if let status = last.flatMap(Self.status(in:)) { members.append(("lastStatus", .int(status))) }
        if let error = entry.lastError { members.append(("lastError", .string(error))) }
        members.append(("createdAt", .int(entry.createdAt)))
        return .object(members)
    }

    /// The HTTP status of an outcome text `status NNN…`, if it is one.
    static func status(in text: String) -> Int64? {
        guard text.hasPrefix("status ") else { return nil }
        return Int64(text.dropFirst(7).prefix(3))
    }

    private static func positive(_ name: String, _ value: String) throws(BizError) -> Int {
        guard value.utf8.count <= 9, let number = Int(value), number > 0 else {
            throw .invalidRequest("\(name) must be a positive integer")
        }
        return number
    }

    private static func json(_ value: JSONValue, status: Int = 200) -> Response {
        Response(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                 body: value.serializedBytes())
    }
}
