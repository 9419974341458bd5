import Basics
import HTTPKit
import UpCore

/// `GET|HEAD /dl/<bucket>/<key>` — the key percent-encoded as a URL path (`/` stays a `/`): a
/// download the way a Qiniu bucket's domain serves one.
///
/// - A bucket listed in `publicBuckets` is served as it is.
/// - Any other only with `?e=<deadline>&token=<AK>:<sign>`, exactly what the Python SDK's
///   `Auth.private_download_url("http(s)://<up-server>/dl/<bucket>/<key>")` produces
///   (`DownloadToken`): the signature is checked against the URL under `publicBaseURL` and
///   under `http://` and `https://` with the request's `Host` (behind a proxy, keep `Host`:
///   nginx's `proxy_set_header Host $host`). `401 expired token` after the deadline, `401 bad
///   token` for a missing, forged or unknown-key token.
/// - `Range: bytes=…` (one range) → 206 with `Content-Range`; past the end → 416; `HEAD` the
///   same headers without a body. `631` for a bucket that is not configured, `612` for a key
///   without an object.
struct DownloadController: Sendable {
    let manager: ObjectManager
    let blobs: any BlockStore
    let keys: KeyRing
    /// Buckets served without a token.
    let publicBuckets: Set<String>
    /// `UpServerConfiguration.publicBaseURL`, if set.
    let publicBaseURL: String?
    let clock: any WallClock

    /// Adds the route (`HEAD` falls back to it).
    func register(on router: inout UpRouter) {
        router.get("/dl/:bucket/*") { request, _ in try await self.download(request) }
    }

    /// The download.
    func download(_ request: Request) async throws -> Response {
        guard let bucket = request.parameters["bucket"], let raw = request.parameters["*"],
            let key = FormURLEncoding.percentDecode(raw, plusAsSpace: false), !key.isEmpty
        else { throw UpError(.badRequest, detail: "expected /dl/<bucket>/<key>") }
        try ObjectKeyRule.check(key)
        if !publicBuckets.contains(bucket) { try authorize(request) }
        let object = try await manager.object(.init(bucket: bucket, key: key))
        var headers: HTTPHeaders = [
            "Content-Type": object.mimeType, "ETag": "\"\(object.etag)\"", "Accept-Ranges": "bytes",
        ]
        if !publicBuckets.contains(bucket) { headers.set(name: "Cache-Control", value: "private, no-store") }
        switch ByteRange.parse(request.headers["Range"], size: object.fsize) {
        case .whole:
            return Response(status: 200, headers: headers, body: try await body(object, nil, request))
        case .partial(let range):
            headers.set(name: "Content-Range", value: ByteRange.contentRange(range, size: object.fsize))
            return Response(status: 206, headers: headers, body: try await body(object, range, request))
        case .unsatisfiable:
            // The table's row, with the size the client needs (RFC 9110 §15.5.17).
            let code = UpError.Code.rangeNotSatisfiable
            return .error(
                status: code.status, message: code.message, headers: ["Content-Range": "bytes */\(object.fsize)"])
        }
    }

    /// The bytes. For `HEAD` too: the server sends the headers with this body's length and no
    /// body (a file range costs a descriptor, a streamed body nothing: it is never pulled).
    private func body(_ object: StoredObject, _ range: Range<Int64>?, _ request: Request) async throws -> Response.Body {
        try await ObjectDownload(store: blobs).body(for: object, range: range, prime: request.method != .head)
    }

    /// Checks the private-download token.
    private func authorize(_ request: Request) throws(UpError) {
        var bases: [String] = []
        if let publicBaseURL { bases.append(publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL) }
        if let host = request.headers["Host"], !host.isEmpty { bases += ["http://\(host)", "https://\(host)"] }
        do {
            _ = try DownloadToken.verify(target: request.target, bases: bases, keys: keys, now: clock.unixSeconds)
        } catch .expired {
            throw UpError(.expiredToken, detail: "download URL past its deadline")
        } catch {
            throw UpError(.badToken, detail: "download token \(error)")
        }
    }
}
