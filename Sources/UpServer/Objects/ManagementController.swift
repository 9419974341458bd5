import Basics
import HTTPKit
import UpCore

/// Qiniu's rs object management, authorised with the QBox/Qiniu management signature
/// (`ManagementAuthenticator`) exactly as the Python SDK's `BucketManager` signs it:
///
/// - `GET|POST /stat/<EncodedEntryURI>` → the attributes (`ObjectManager.attributes(of:)`);
/// - `POST /delete/…`, `/move/…`, `/copy/…`, `/chgm/…`, `/deleteAfterDays/…` (paths as
///   `ManagementCommand` parses them) → an empty 200;
/// - `POST /batch` with form fields `op=<operation>` (at most ``maxBatch``) → one
///   `{"code": …[, "data": …]}` per op, in order; 200 when every op succeeded, else 298
///   (Qiniu's "partial success"), a failed op's data being `{"error": …}`;
/// - `GET /download/<EncodedEntryURI>` → the object's bytes (`ObjectDownload`).
///
/// Refusals: 401 (signature), 400 (malformed operation), 631, 612, 614 (`ObjectManager`).
/// (Listing is `ListController`, signed downloads `DownloadController`, the callback outbox's
/// view `OutboxAdminController`.)
struct ManagementController: Sendable {
    /// Most operations in one `/batch`, as Qiniu.
    static let maxBatch = 1000

    let manager: ObjectManager
    let blobs: any BlockStore
    let authenticator: ManagementAuthenticator
    let clock: any WallClock

    /// Adds the routes.
    func register(on router: inout UpRouter) {
        let operate: HTTPHandler = { request, _ in try await self.operate(request) }
        router.get("/stat/:entry", handler: operate)
        for verb in ManagementCommand.verbs {
            router.post("/\(verb)/*", body: .collect(maxBytes: 64 << 10), handler: operate)
        }
        router.post("/batch", body: .collect(maxBytes: 4 << 20)) { request, _ in try await self.batch(request) }
        router.get("/download/:entry") { request, _ in try await self.download(request) }
    }

    /// One operation named by the request's path.
    func operate(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        let data = try await manager.run(try ManagementCommand.parse(request.path))
        return Response.json(raw: data.map { $0.serializedBytes() } ?? [], headers: ["Cache-Control": "no-store"])
    }

    /// `POST /batch`.
    func batch(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        guard let fields = FormURLEncoding.parse(request.body) else {
            throw UpError(.badRequest, detail: "batch body is not form-urlencoded")
        }
        let operations = fields.filter { $0.name == "op" }.map(\.value)
        guard !operations.isEmpty, operations.count <= Self.maxBatch else {
            throw UpError(.badRequest, detail: "batch needs 1...\(Self.maxBatch) op fields, got \(operations.count)")
        }
        var results: [JSONValue] = []
        var allSucceeded = true
        for operation in operations {
            do {
                let data = try await manager.run(try ManagementCommand.parse(operation))
                var members: [(key: String, value: JSONValue)] = [("code", .int(200))]
                if let data { members.append(("data", data)) }
                results.append(.object(members))
            } catch let error as UpError {
                allSucceeded = false
                results.append(.object([
                    ("code", .int(Int64(error.code.status))), ("data", .object([("error", .string(error.code.message))])),
                ]))
            }
        }
        return Response.json(
            status: allSucceeded ? 200 : 298, raw: JSONValue.array(results).serializedBytes(),
            headers: ["Cache-Control": "no-store"])
    }

    /// `GET /download/<EncodedEntryURI>`.
    func download(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        guard let encoded = request.parameters["entry"] else { throw UpError(.badRequest, detail: "bad EncodedEntryURI") }
        let object = try await manager.object(try ManagementCommand.Entry(encoded: encoded))
        // A failure to read before the head is the boundary's (`ObjectDownload`): a store that
        // does not answer is the retryable 503, anything else a logged 599.
        let body = try await ObjectDownload(store: blobs).body(for: object, range: nil)
        return Response(
            status: 200,
            headers: ["Content-Type": object.mimeType, "ETag": "\"\(object.etag)\"", "Cache-Control": "no-store"],
            body: body)
    }
}
