import HTTPKit
import NativeCrypto
import UpCore
@testable import UpServer

/// Drives the v2 routes of an `UpServerHarness` the way the Python SDK does (qiniu-protocol.md §9.3).
struct MultipartClient {
    let harness: UpServerHarness
    let token: String
    /// The key in the path; `nil` sends `~`.
    var key: String?
    var bucket = UpServerHarness.bucket

    /// The path of `resource` under this client's bucket and key.
    func path(_ resource: MultipartPath.Resource) -> String {
        MultipartPath(bucket: bucket, key: key, resource: resource).path
    }

    /// `POST …/uploads`.
    func initiate() async -> Response {
        await harness.send(.post, path(.uploads), headers: UpServerHarness.auth(token))
    }

    /// `POST …/uploads`, returning the uploadId (empty on failure).
    func start() async -> String {
        (await initiate()).json["uploadId"] as? String ?? ""
    }

    /// `PUT …/uploads/<id>/<n>` with `Content-MD5: <hex md5>` unless `md5` says otherwise
    /// (`""` omits the header).
    func put(_ id: String, _ number: Int, _ bytes: [UInt8], md5: String? = nil) async -> Response {
        var headers = UpServerHarness.auth(token)
        headers.set(name: "Content-Type", value: "application/octet-stream")
        let md5 = md5 ?? Hex.encode(MD5.hash(bytes))
        if !md5.isEmpty { headers.set(name: "Content-MD5", value: md5) }
        return await harness.send(.put, path(.part(uploadID: id, partNumber: number)), headers: headers, body: bytes)
    }

    /// Uploads parts and returns their etags by number (in the order given).
    func putAll(_ id: String, _ parts: [(number: Int, bytes: [UInt8])]) async -> [Int: String] {
        var etags: [Int: String] = [:]
        for part in parts { etags[part.number] = (await put(id, part.number, part.bytes)).json["etag"] as? String }
        return etags
    }

    /// `POST …/uploads/<id>` with `request` serialized as Python sends it (nulls for unset members).
    func complete(_ id: String, _ request: CompleteMultipartRequest) async -> Response {
        var headers = UpServerHarness.auth(token)
        headers.set(name: "Content-Type", value: "application/json")
        return await harness.send(
            .post, path(.upload(id: id)), headers: headers, body: Array(request.serialized().utf8))
    }

    /// `POST …/uploads/<id>` naming `etags` in ascending part order.
    func complete(_ id: String, etags: [Int: String], fname: String? = nil) async -> Response {
        let parts = etags.keys.sorted().map { CompleteMultipartRequest.Part(etag: etags[$0] ?? "", partNumber: $0) }
        return await complete(id, CompleteMultipartRequest(parts: parts, fname: fname))
    }

    /// `DELETE …/uploads/<id>`.
    func abort(_ id: String) async -> Response {
        await harness.send(.delete, path(.upload(id: id)), headers: UpServerHarness.auth(token))
    }

    /// `GET …/uploads/<id>?<query>`.
    func list(_ id: String, query: String = "") async -> Response {
        let target = path(.upload(id: id)) + (query.isEmpty ? "" : "?" + query)
        return await harness.send(.get, target, headers: UpServerHarness.auth(token))
    }
}

/// Test payloads of qiniu-protocol.md §10.4.
enum MultipartPayload {
    static let mebibyte = 1 << 20

    /// `bytes(((i*31) + (i>>12)) & 0xff for i in range(9*1024*1024))`.
    static let nineMiB: [UInt8] = (0..<(9 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ ($0 >> 12)) }

    /// `data` cut into parts of the given sizes in MiB, numbered from 1.
    static func split(_ data: [UInt8], mebibytes: [Int]) -> [(number: Int, bytes: [UInt8])] {
        var offset = 0
        return mebibytes.enumerated().map { index, size in
            let end = min(data.count, offset + size * mebibyte)
            defer { offset = end }
            return (index + 1, Array(data[offset..<end]))
        }
    }
}
