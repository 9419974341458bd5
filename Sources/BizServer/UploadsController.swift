import Basics
import HTTPKit
import JSONText
import UpCore

/// `GET /v1/uploads` and `GET /v1/uploads/:id`: a client reads back its own upload records,
/// paged by cursor and filtered by `key`, `traceId` or `endUser`.
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
        let query = try Self.query(request.queryItems, clientID: client.id)
        // One extra row tells whether a next page exists without a second query.
        var extended = query
        extended.limit += 1
        guard let rows = try await read({ try await store.uploads(extended) }) else {
            // A cursor the client cannot have got from us: an empty page would read as "no more
            // uploads" and hide the caller's bug (issue 10 item 14).
            throw BizError.invalidRequest("after must be the next of an earlier page of your uploads")
        }
        let page = rows.prefix(query.limit)
        let next = rows.count > query.limit ? page.last.map { JSONText.quoted($0.id) } ?? "null" : "null"
        let body = "{\"items\":[" + page.map(\.json).joined(separator: ",") + "],\"next\":" + next + "}"
        return Response.json(raw: Array(body.utf8), headers: ["Cache-Control": "no-store"])
    }

    /// The query string as an ``UploadQuery``: `limit`, `after` (empty = first page), and the exact
    /// filters `key`, `traceId`, `endUser`. Anything else, or a name given twice, is a 400, so a
    /// misspelt filter cannot silently list everything.
    static func query(_ items: [(name: String, value: String)], clientID: String) throws(BizError) -> UploadQuery {
        var query = UploadQuery(clientID: clientID, limit: defaultLimit)
        var seen = Set<String>()
        for (name, value) in items {
            guard seen.insert(name).inserted else { throw .invalidRequest("query parameter '\(name)' given twice") }
            switch name {
            case "limit":
                guard let limit = Int(value), (1...maxLimit).contains(limit) else {
                    throw .invalidRequest("limit must be an integer 1…\(maxLimit)")
                }
                query.limit = limit
            case "after": query.after = value.isEmpty ? nil : value
            case "key": query.key = try filter(value, name, maxBytes: ObjectKeyRule.maxBytes)
            case "traceId": query.traceID = try filter(value, name, maxBytes: 64)
            case "endUser": query.endUser = try filter(value, name, maxBytes: 1024)
            default: throw .invalidRequest("unknown query parameter '\(name)'")
            }
        }
        return query
    }

    private static func filter(_ value: String, _ name: String, maxBytes: Int) throws(BizError) -> String {
        guard (1...maxBytes).contains(value.utf8.count), ProtocolText.allows(value) else {
            throw .invalidRequest("\(name) must be 1…\(maxBytes) bytes without NUL")
        }
        return value
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
