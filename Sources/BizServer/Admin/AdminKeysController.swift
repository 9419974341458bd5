import Basics
import HTTPKit
import UpCore

/// `/v1/admin/keys`: the API keys in the store, managed over HTTP with the admin token — the
/// same operations, with the same rules (`APIKeyManager`), as `biz-server keys …`.
///
/// - `GET /v1/admin/keys[?client=ID]` → `{"items": [KeyInfo…]}`, configured keys included (read-only)
/// - `POST /v1/admin/keys` `{"client", "name"?, "expires"?}` → 201 `CreatedKey`, the only time
///   the key is shown
/// - `DELETE /v1/admin/keys/{id}` → 200 `KeyInfo` of the revoked key (again: the same answer)
struct AdminKeysController: Sendable {
    let gate: AdminGate
    let manager: APIKeyManager
    /// This server's view of the store, reloaded after each change made here so the change holds
    /// on this server before the answer is sent (other servers notice by polling).
    let live: LiveAPIKeys?
    let clock: any WallClock

    /// Largest accepted request body.
    static let maxBodyBytes = 16 << 10

    func register(on router: inout Router) {
        router.get("/v1/admin/keys") { request, context in
            try await gate.run("keys.list", request, context) { () throws(BizError) in try await list(request) }
        }
        router.post("/v1/admin/keys", body: .collect(maxBytes: Self.maxBodyBytes)) { request, context in
            try await gate.run("keys.create", request, context) { () throws(BizError) in try await create(request, context) }
        }
        router.delete("/v1/admin/keys/:id") { request, context in
            try await gate.run("keys.revoke", request, context) { () throws(BizError) in try await revoke(request, context) }
        }
    }

    func list(_ request: Request) async throws(BizError) -> Response {
        var client: String?
        for (name, value) in request.queryItems {
            guard name == "client" else { throw .invalidRequest("unknown query parameter '\(name)'") }
            guard client == nil else { throw .invalidRequest("query parameter 'client' given twice") }
            client = value
        }
        let keys = try await manager.list(client: client, now: clock.unixSeconds)
        return Self.json(.object([("items", .array(keys.map(\.json)))]))
    }

    func create(_ request: Request, _ context: RequestContext) async throws(BizError) -> Response {
        let body = try KeyCreationRequest.parse(request.body)
        let created = try await manager.create(
            client: body.client, name: body.name, expires: body.expires, now: clock.now())
        try? await live?.refresh()
        context.addLogFields(["client": .string(created.stored.clientID), "keyId": .string(created.stored.id)])
        return Self.json(created.json, status: 201)
    }

    func revoke(_ request: Request, _ context: RequestContext) async throws(BizError) -> Response {
        let id = request.parameters["id"] ?? ""
        let revoked = try await manager.revoke(id: id, now: clock.unixSeconds)
        try? await live?.refresh()
        context.addLogFields(["client": .string(revoked.clientID), "keyId": .string(revoked.id)])
        return Self.json(revoked.json)
    }

    private static func json(_ value: JSONValue, status: Int = 200) -> Response {
        Response(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                 body: value.serializedBytes())
    }
}
