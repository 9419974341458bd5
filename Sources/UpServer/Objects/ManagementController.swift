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
///
/// (The callback outbox's view, `/admin/outbox`, is `OutboxAdminController`.)
struct ManagementController: Sendable {
    let objects: any ObjectIndex
    let blobs: any BlockStore
    let authenticator: ManagementAuthenticator
    /// Buckets that exist (`UpServerConfiguration.buckets`).
    let buckets: Set<String>
    let clock: any WallClock

    /// Adds the routes.
    func register(on router: inout UpRouter) {
        let stat: HTTPHandler = { request, _ in try await self.stat(request) }
        router.get("/stat/:entry", handler: stat)
        router.post("/stat/:entry", body: .collect(maxBytes: 64 << 10), handler: stat)
        router.get("/download/:entry") { request, _ in try await self.download(request) }
    }

    /// `/stat/<EncodedEntryURI>`.
    func stat(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
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
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        let object = try await object(for: request)
        // A failure to read is the boundary's: a full disk (a large multi-segment object is
        // joined in a scratch file on the data disk, `ObjectDownload`) is the retryable 503 an
        // upload gets, anything else a logged 599.
        let body = try await ObjectDownload(store: blobs).body(for: object)
        return Response(
            status: 200,
            headers: [
                "Content-Type": object.mimeType, "ETag": "\"\(object.etag)\"", "Cache-Control": "no-store",
            ],
            body: body)
    }

    /// The object named by the route's `entry`: 400 for a malformed entry or one without a key,
    /// 631 for an unknown bucket, 612 when there is no such object.
    private func object(for request: Request) async throws -> StoredObject {
        guard let encoded = request.parameters["entry"], let entry = EncodedEntryURI.decode(encoded),
            let key = entry.key
        else { throw UpError(.badRequest, detail: "bad EncodedEntryURI") }
        guard buckets.contains(entry.bucket) else {
            throw UpError(.noSuchBucket, detail: entry.bucket)
        }
        guard let object = try await objects.object(bucket: entry.bucket, key: key) else {
            throw UpError(.noSuchFile, detail: "\(entry.bucket):\(key)")
        }
        return object
    }
}
