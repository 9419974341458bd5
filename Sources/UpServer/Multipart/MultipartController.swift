import Basics
import HTTPKit
import UpCore

/// v2 multipart upload (qiniu-protocol.md §5): init, upload part, complete, abort, list parts
/// under `/buckets/<bucket>/objects/<B64 key | ~>/uploads`.
///
/// Routes are registered as `/buckets/*` per method and parsed with `MultipartPath`, because a
/// `:key` parameter cannot match the empty segment of the empty key (`objects//uploads`, §1.3
/// "Key supplied") and the path parser already knows every shape. The method picks the step.
///
/// Every step authorizes `Authorization: UpToken` (§1.2) — complete may carry a fresh token
/// (§1.2 step 3), so the uploadId is bound to bucket and key, never to the token string.
struct MultipartController: Sendable {
    /// Largest part (§5: "Part size 1 MiB..1 GiB").
    static let maxPartSize: Int64 = 1 << 30
    /// Smallest part other than the last, checked at complete (§5).
    static let minPartSize: Int64 = 1 << 20
    /// Largest complete body accepted (the parts list of 10000 parts is ~600 KiB).
    static let maxCompleteBody = 1 << 20
    /// `max-parts` default and maximum (§5).
    static let maxListedParts = 1000

    let authorizer: UploadAuthorizer
    let uploads: any MultipartIndex
    let ingest: BlobIngest
    let committer: ObjectCommitter
    /// How long a new uploadId lives (`multipartLifetimeSeconds`).
    let lifetimeSeconds: Int64
    let clock: any WallClock
    let metrics: UpMetrics
    let logger: Logger

    /// Adds the v2 routes to `router`.
    func register(on router: inout UpRouter) {
        router.post("/buckets/*", body: .collect(maxBytes: Self.maxCompleteBody)) { request, _ in
            let path = try MultipartPath.parse(request.path)
            switch path.resource {
            case .uploads: return try await initiate(request, path: path)
            case .upload(let id): return try await complete(request, path: path, uploadID: id)
            case .part: throw Self.methodNotAllowed
            }
        }
        // A 1 GiB part at a slow link outlasts the default 30 s handler timeout.
        router.put("/buckets/*", body: .stream(maxBytes: Int(Self.maxPartSize)), timeout: .seconds(3600)) {
            request, _ in
            let path = try MultipartPath.parse(request.path)
            guard case .part(let id, let number) = path.resource else { throw Self.methodNotAllowed }
            return try await uploadPart(request, path: path, uploadID: id, partNumber: number)
        }
        router.delete("/buckets/*") { request, _ in
            let path = try MultipartPath.parse(request.path)
            guard case .upload(let id) = path.resource else { throw Self.methodNotAllowed }
            return try await abort(request, path: path, uploadID: id)
        }
        router.get("/buckets/*") { request, _ in
            let path = try MultipartPath.parse(request.path)
            guard case .upload(let id) = path.resource else { throw Self.methodNotAllowed }
            return try await listParts(request, path: path, uploadID: id)
        }
    }

    // MARK: Init, abort, list parts

    /// `POST …/uploads` (§5 init): `200 {"uploadId","expireAt"}`.
    func initiate(_ request: Request, path: MultipartPath) async throws -> Response {
        let now = clock.unixSeconds
        _ = try authorize(request, path: path, now: now)
        // §5: expireAt = init + 7 days by default; must be present and non-zero (§9.3).
        let upload = try await uploads.createUpload(
            bucket: path.bucket, key: path.key, expiresAt: now + lifetimeSeconds,
            createdAt: now)
        metrics.uploadsStarted.increment(["v2"])
        return Self.reply(.object([("uploadId", .string(upload.id)), ("expireAt", .int(upload.expiresAt))]))
    }

    /// `DELETE …/uploads/<id>` (§5 abort): `200 {}`; the parts' blobs are removed.
    func abort(_ request: Request, path: MultipartPath, uploadID: String) async throws -> Response {
        let now = clock.unixSeconds
        _ = try authorize(request, path: path, now: now)
        _ = try await activeUpload(uploadID, path: path, now: now)
        let released: [BlobID]
        do {
            released = try await uploads.abortUpload(uploadID)
        } catch UpIndexError.noSuchUpload {
            throw UpError(.noSuchUploadID, detail: "\(uploadID) completed or aborted meanwhile")
        }
        await remove(released)
        return Self.reply(.object([]))
    }

    /// `GET …/uploads/<id>?max-parts=<n>&part-number-marker=<m>` (§5 list parts).
    ///
    /// `putTime` is Unix **seconds** (the time the part was stored), not Qiniu's 100 ns units of
    /// object stat: no SDK reads it, and seconds are what `expireAt` uses in the same reply.
    func listParts(_ request: Request, path: MultipartPath, uploadID: String) async throws -> Response {
        let now = clock.unixSeconds
        _ = try authorize(request, path: path, now: now)
        let upload = try await activeUpload(uploadID, path: path, now: now)
        let max = try Self.queryInteger(request, names: ["max-parts"]) ?? Self.maxListedParts
        // §5: the docs spell `part-number-marker`, api-specs YAML `part-number_marker`; accept both.
        let marker = try Self.queryInteger(request, names: ["part-number-marker", "part-number_marker"]) ?? 0
        guard max >= 1 else { throw UpError(.badRequest, detail: "max-parts must be at least 1") }
        let listing = try await uploads.listParts(
            uploadID: uploadID, marker: marker, max: min(max, Self.maxListedParts))
        let parts = listing.parts.map { part in
            JSONValue.object([
                ("partNumber", .int(Int64(part.partNumber))), ("etag", .string(part.etag)), ("size", .int(part.size)),
                ("putTime", .int(part.putTime)),
            ])
        }
        return Self.reply(.object([
            ("uploadId", .string(upload.id)), ("expireAt", .int(upload.expiresAt)),
            ("partNumberMarker", .int(Int64(listing.nextMarker))), ("parts", .array(parts)),
        ]))
    }

    // MARK: Shared checks

    /// Verifies the token (§1.2), that it is for the path's bucket and that its scope allows the
    /// path's key.
    ///
    /// The key check refuses, at init and on every later step, a key the token could never store
    /// (§1.3 scope / keylimit → 403) before any byte is sent; complete checks the final key again.
    /// With `forceSaveKey` the client key is ignored, so it is not checked here; `~` has no key.
    ///
    /// A path bucket that does not exist is `631 no such bucket` (§1.2 step 4); an existing bucket
    /// the token's scope does not name is `403 key doesn't match with scope` — the token is valid,
    /// it just does not cover this object (§1.3 "Wrong key → 403", applied to the bucket part).
    func authorize(_ request: Request, path: MultipartPath, now: Int64) throws(UpError) -> UpToken {
        let token = try authorizer.authorize(header: request.headers["Authorization"], now: now)
        guard token.policy.bucket.utf8.elementsEqual(path.bucket.utf8) else {
            guard authorizer.buckets.contains(path.bucket) else {
                throw UpError(.noSuchBucket, detail: path.bucket)
            }
            throw UpError(.keyMismatch, detail: "token bucket \(token.policy.bucket), path bucket \(path.bucket)")
        }
        if let key = path.key, token.policy.forceSaveKey != true { try token.policy.authorize(key: key) }
        return token
    }

    /// The upload `id` if it is active, not expired at `now`, and bound to the path's bucket and
    /// key; otherwise `612 no such uploadId` with that exact text (§5: go/Java SDKs match it).
    func activeUpload(_ id: String, path: MultipartPath, now: Int64) async throws -> MultipartUpload {
        guard let upload = try await uploads.upload(id: id), upload.isUsable(now: now),
            Self.isBound(upload, to: path)
        else { throw UpError(.noSuchUploadID, detail: id) }
        return upload
    }

    /// Whether the upload was started under the path's bucket and key (§5: bound to both).
    static func isBound(_ upload: MultipartUpload, to path: MultipartPath) -> Bool {
        upload.bucket.utf8.elementsEqual(path.bucket.utf8) && sameKey(upload.key, path.key)
    }

    /// Keys compare as UTF-8 bytes (as `PutPolicy.authorize(key:)` does), never by Unicode
    /// canonical equivalence; `nil` (`~`) equals only `nil`.
    static func sameKey(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }

    /// Removes blobs nothing references any more; best effort (the sweeper finds leftovers).
    func remove(_ blobs: [BlobID]) async {
        await ingest.store.release(blobs, what: "part blobs", logger: logger)
    }

    /// A 200 JSON reply with `Cache-Control: no-store`.
    static func reply(_ value: JSONValue) -> Response {
        Response.json(raw: value.serializedBytes(), headers: ["Cache-Control": "no-store"])
    }

    /// A method the path's resource does not have (e.g. `PUT …/uploads`).
    static let methodNotAllowed = UpError(.methodNotAllowed, detail: "v2 resource without this method")

    /// The first of `names` present in the query as a non-negative integer; `nil` if none is present.
    static func queryInteger(_ request: Request, names: [String]) throws(UpError) -> Int? {
        for name in names {
            guard let text = request.queryItem(name) else { continue }
            guard let value = Int(text), value >= 0 else {
                throw UpError(.badRequest, detail: "\(name) is not a non-negative integer")
            }
            return value
        }
        return nil
    }
}
