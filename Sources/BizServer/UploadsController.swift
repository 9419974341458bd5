import Basics
import HTTPKit

/// `GET /v1/uploads` and `GET /v1/uploads/:id`: a client reads back its own upload records.
/// Another client's record is a 404, not a 403, so ids of others cannot be probed.
struct UploadsController: Sendable {
    let clients: ClientDirectory
    let store: any UploadRecordStore
    let metrics: BizMetrics

    /// Page size when `limit` is absent, and the largest allowed.
    static let defaultLimit = 50
    static let maxLimit = 1000

    func register(on router: inout Router) {
        router.get("/v1/uploads") { request, _ in try await list(request) }
        router.get("/v1/uploads/:id") { request, _ in try await show(request) }
    }

    func list(_ request: Request) async throws -> Response {
        let client = try clients.authenticate(authorization: request.headers["Authorization"])
        var limit = Self.defaultLimit
        if let text = request.queryItem("limit") {
            guard let value = Int(text), (1...Self.maxLimit).contains(value) else {
                throw BizError.invalidRequest("limit must be an integer 1…\(Self.maxLimit)")
            }
            limit = value
        }
        let after = request.queryItem("after").flatMap { $0.isEmpty ? nil : $0 }
        // One extra row tells whether a next page exists without a second query.
        let rows = try await read { try await store.uploads(clientID: client.id, limit: limit + 1, after: after) }
        let page = rows.prefix(limit)
        let next = rows.count > limit ? page.last.map { JSONText.quoted($0.id) } ?? "null" : "null"
        let body = "{\"items\":[" + page.map(\.json).joined(separator: ",") + "],\"next\":" + next + "}"
        return Response.json(raw: Array(body.utf8), headers: ["Cache-Control": "no-store"])
    }

    func show(_ request: Request) async throws -> Response {
        let client = try clients.authenticate(authorization: request.headers["Authorization"])
        let id = request.parameters["id"] ?? ""
        guard let record = try await read({ try await store.upload(id: id) }), record.clientID == client.id else {
            throw BizError.uploadNotFound
        }
        return Response.json(raw: Array(record.json.utf8), headers: ["Cache-Control": "no-store"])
    }

    private func read<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            metrics.storeErrors.increment()
            throw BizError.storeUnavailable.with(detail: "\(error)")
        }
    }
}
