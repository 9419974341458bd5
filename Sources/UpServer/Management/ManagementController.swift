import Basics
import HTTPKit
import UpCore

/// Management reads, authorised with the QBox/Qiniu management signature
/// (`ManagementAuthenticator`), for operators and end-to-end tests:
///
/// - `GET|POST /stat/<EncodedEntryURI>` → Qiniu's stat shape, or `612 no such file or directory`
///   (the code Qiniu's rs uses for a missing file, §8 "resource missing"; the Python SDK's
///   `BucketManager.stat` POSTs).
/// - `GET /download/<EncodedEntryURI>` → the object's bytes (`ObjectDownload`).
/// - `GET /admin/outbox?state=pending|delivered|failed&limit=N` → the callback outbox.
struct ManagementController: Sendable {
    /// Largest `/admin/outbox` page.
    static let maxListLimit = 1000

    let services: UpServices

    /// Creates the controller.
    init(services: UpServices) {
        self.services = services
    }

    /// Checks management signatures with the keys in force (a reload may change them).
    var authenticator: ManagementAuthenticator { ManagementAuthenticator(keys: services.authorizer.keys) }

    /// Adds the routes.
    func register(on router: inout Router) {
        let stat: HTTPHandler = { request, _ in try await self.stat(request) }
        router.get("/stat/:entry", handler: stat)
        router.post("/stat/:entry", body: .collect(maxBytes: 64 << 10), handler: stat)
        router.get("/download/:entry") { request, _ in try await self.download(request) }
        router.get("/admin/outbox") { request, _ in try await self.outbox(request) }
    }

    /// `/stat/<EncodedEntryURI>`.
    func stat(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: services.now)
        let object = try await object(for: request)
        var members: [(key: String, value: JSONValue)] = [
            ("fsize", .int(object.fsize)), ("hash", .string(object.etag)), ("mimeType", .string(object.mimeType)),
            // Qiniu's putTime is in units of 100 ns.
            ("putTime", .int(object.putTime &* 10_000_000)), ("type", .int(Int64(object.fileType))),
        ]
        if !object.metadata.isEmpty {
            let metadata = object.metadata.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.string($0.value)) }
            members.append(("x-qn-meta", .object(metadata)))
        }
        return Response.json(raw: JSONValue.object(members).serializedBytes(), headers: ["Cache-Control": "no-store"])
    }

    /// `/download/<EncodedEntryURI>`.
    func download(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: services.now)
        let object = try await object(for: request)
        let body: Response.Body
        do {
            body = try await ObjectDownload(store: services.store).body(for: object)
        } catch {
            if InsufficientStorage.isNoSpace(error) {
                // A large multi-segment object is joined in a scratch file on the data disk
                // (ObjectDownload): with that disk full, the object is intact but cannot be
                // served until space returns — the same retryable 503 as an upload gets.
                throw UpError.insufficientStorage("download \(object.bucket):\(object.key): \(error)")
            }
            services.logger.error("download: cannot read object", [
                "bucket": .string(object.bucket), "key": .string(object.key), "error": .string("\(error)"),
            ])
            throw UpError(.internalError, detail: "download \(object.bucket):\(object.key)")
        }
        return Response(
            status: 200,
            headers: [
                "Content-Type": object.mimeType, "ETag": "\"\(object.etag)\"", "Cache-Control": "no-store",
            ],
            body: body)
    }

    /// `/admin/outbox`.
    func outbox(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: services.now)
        let stateText = request.queryItem("state") ?? OutboxEntry.State.pending.rawValue
        guard let state = OutboxEntry.State(rawValue: stateText) else {
            throw UpError(.badRequest, detail: "state must be pending, delivered or failed")
        }
        var limit = 100
        if let text = request.queryItem("limit") {
            guard let value = Int(text), value > 0 else { throw UpError(.badRequest, detail: "limit must be > 0") }
            limit = min(value, Self.maxListLimit)
        }
        let entries = try await services.index.listOutbox(state: state, limit: limit)
        let items = entries.map(Self.json(for:))
        let body = JSONValue.object([("state", .string(state.rawValue)), ("items", .array(items))])
        return Response.json(raw: body.serializedBytes(), headers: ["Cache-Control": "no-store"])
    }

    /// One outbox entry for the listing: URLs without their query (it may carry a token), no body.
    static func json(for entry: OutboxEntry) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .int(entry.id)), ("bucket", .string(entry.bucket)), ("key", .string(entry.key)),
            ("hash", .string(entry.etag)), ("state", .string(entry.state.rawValue)),
            ("attempts", .int(Int64(entry.attempts))), ("nextAttemptAt", .int(entry.nextAttemptAt)),
            ("urls", .array(entry.request.urls.map { .string(CallbackURL.redacted($0)) })),
        ]
        if let error = entry.lastError { members.append(("lastError", .string(error))) }
        if let reply = entry.reply { members.append(("reply", .string(reply))) }
        return .object(members)
    }

    /// The object named by the route's `entry`: 400 for a malformed entry or one without a key,
    /// 631 for an unknown bucket, 612 when there is no such object.
    private func object(for request: Request) async throws -> StoredObject {
        guard let encoded = request.parameters["entry"], let entry = EncodedEntryURI.decode(encoded),
            let key = entry.key
        else { throw UpError(.badRequest, detail: "bad EncodedEntryURI") }
        guard services.authorizer.buckets.contains(entry.bucket) else {
            throw UpError(.noSuchBucket, detail: entry.bucket)
        }
        guard let object = try await services.index.object(bucket: entry.bucket, key: key) else {
            throw UpError(.noSuchFile, detail: "\(entry.bucket):\(key)")
        }
        return object
    }
}

extension UpError.Code {
    /// 612 for a missing object, with the text Qiniu's rs answers `stat` with (§8: 612
    /// "resource missing").
    static let noSuchFile = UpError.Code(status: 612, message: "no such file or directory", name: "no_such_file")
}
