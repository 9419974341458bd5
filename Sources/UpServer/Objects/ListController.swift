import Basics
import HTTPKit
import UpCore

/// Qiniu's v1 listing, `GET|POST /list?bucket=<b>[&prefix=][&marker=][&limit=][&delimiter=]` (the
/// rsf service; the Python SDK's `BucketManager.list` GETs it, signed like every management
/// request, `ManagementAuthenticator`):
///
/// ```
/// {"marker": "<next, or empty>", "commonPrefixes": ["a/", …], "items": [{"key": …, <stat fields>}, …]}
/// ```
///
/// `commonPrefixes` only when a delimiter was given; `limit` 1–1000, default (and above 1000)
/// 1000; `marker` empty when the listing is complete (the SDK's `eof`). Refusals: 400 without
/// `bucket` or with a `limit` that is not a number, 400 `invalid key` for a prefix or delimiter
/// the key rule refuses, 631 for an unknown bucket, 640 for a marker
/// this server did not issue, 401 for the signature.
struct ListController: Sendable {
    let catalog: any ObjectCatalog
    let authenticator: ManagementAuthenticator
    /// Buckets that exist.
    let buckets: Set<String>
    let clock: any WallClock

    /// Adds the routes.
    func register(on router: inout UpRouter) {
        let list: HTTPHandler = { request, _ in try await self.list(request) }
        router.get("/list", handler: list)
        router.post("/list", body: .collect(maxBytes: 64 << 10), handler: list)
    }

    /// The listing.
    func list(_ request: Request) async throws -> Response {
        _ = try authenticator.authenticate(request, now: clock.unixSeconds)
        guard let bucket = request.queryItem("bucket"), !bucket.isEmpty else {
            throw UpError(.badRequest, detail: "list needs bucket")
        }
        guard buckets.contains(bucket) else { throw UpError(.noSuchBucket, detail: bucket) }
        var limit = ObjectListing.maxLimit
        if let text = request.queryItem("limit"), !text.isEmpty {
            guard let value = Int(text), value >= 0 else { throw UpError(.badRequest, detail: "limit \(text.prefix(20))") }
            if value > 0 { limit = min(value, ObjectListing.maxLimit) }
        }
        let delimiter = request.queryItem("delimiter") ?? "", prefix = request.queryItem("prefix") ?? ""
        // Both are parts of keys, so the key rule bounds them (a NUL would not reach the index).
        try ObjectKeyRule.check(prefix)
        try ObjectKeyRule.check(delimiter)
        let listing = ObjectListing(catalog: catalog, bucket: bucket, prefix: prefix, delimiter: delimiter, limit: limit)
        let marker = request.queryItem("marker").flatMap { $0.isEmpty ? nil : $0 }
        let page = try await listing.page(marker: marker)
        var members: [(key: String, value: JSONValue)] = [("marker", .string(page.marker ?? ""))]
        if !delimiter.isEmpty { members.append(("commonPrefixes", .array(page.commonPrefixes.map { .string($0) }))) }
        let items = page.items.map { object in
            JSONValue.object([("key", .string(object.key))] + ObjectManager.attributes(of: object) + [("status", .int(0))])
        }
        members.append(("items", .array(items)))
        return Response.json(raw: JSONValue.object(members).serializedBytes(), headers: ["Cache-Control": "no-store"])
    }
}
