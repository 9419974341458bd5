import Basics
import Foundation
import HTTPKit
import HTTPTransport
import NativeCrypto
import Testing
import TestSupport
import UpCore
@testable import UpServer

@Suite("ManagementController")
struct ManagementControllerTests {
    let mac = HMACSHA1(key: Array(UpServerHarness.secretKey.utf8))

    /// `QBox AK:sign` over `target` — Python's `Auth.token_of_request(url)`.
    func qbox(_ target: String, accessKey: String = UpServerHarness.accessKey, mac: HMACSHA1? = nil) -> HTTPHeaders {
        ["Authorization": QBoxSignature.sign(
            target: target, body: [], contentType: nil, accessKey: accessKey, mac: mac ?? self.mac)]
    }

    func entry(_ key: String, bucket: String = UpServerHarness.bucket) -> String {
        EncodedEntryURI.encode(bucket: bucket, key: key)
    }

    /// Puts `pieces` as one object of several segments, as mkfile would.
    func put(
        _ harness: UpServerHarness, key: String, pieces: [[UInt8]], metadata: [String: String] = [:],
        bucket: String = UpServerHarness.bucket
    ) async throws {
        var segments: [Segment] = []
        for piece in pieces {
            let blob = try harness.store.create()
            _ = try harness.store.append(piece, to: blob, at: 0)
            segments.append(Segment(blob: blob, length: Int64(piece.count)))
        }
        let size = Int64(pieces.reduce(0) { $0 + $1.count })
        let object = StoredObject(
            bucket: bucket, key: key, etag: "Fetag", fsize: size, mimeType: "text/plain",
            segments: segments, metadata: metadata, putTime: harness.now, fileType: 1)
        _ = try await harness.index.putObject(object, mode: .replace, completion: nil, callback: nil)
    }

    @Test("stat: Qiniu's shape with putTime in 100 ns units and x-qn-meta")
    func stat() async throws {
        let harness = UpServerHarness()
        try await put(harness, key: "dir/a.txt", pieces: [Array("hello ".utf8), Array("world".utf8)], metadata: ["x-qn-meta-b": "2", "x-qn-meta-a": "1"])
        let target = "/stat/" + entry("dir/a.txt")
        let response = await harness.send(.get, target, headers: qbox(target))
        #expect(response.status == 200)
        #expect(response.text == #"{"fsize":11,"hash":"Fetag","mimeType":"text/plain","putTime":19000000000000000,"type":1,"x-qn-meta":{"x-qn-meta-a":"1","x-qn-meta-b":"2"}}"#)
        #expect(response.headers["Cache-Control"] == "no-store")
        // The Python SDK's BucketManager.stat POSTs, signed with the Qiniu scheme and a date.
        let date = QiniuDate.format(harness.now)
        let authorization = QiniuSignature.sign(
            method: "POST", target: target, host: "127.0.0.1:9000", contentType: "application/x-www-form-urlencoded",
            headers: [("X-Qiniu-Date", date)], body: [], accessKey: UpServerHarness.accessKey, mac: mac)
        let posted = await harness.send(.post, target, headers: [
            "Authorization": authorization, "Host": "127.0.0.1:9000", "X-Qiniu-Date": date,
            "Content-Type": "application/x-www-form-urlencoded",
        ])
        #expect(posted.status == 200 && posted.text == response.text)
    }

    @Test("stat: 612 for a missing object, 631 for an unknown bucket, 400 for a bad entry")
    func statErrors() async {
        let harness = UpServerHarness()
        for (target, status, error) in [
            ("/stat/" + entry("nope"), 612, "no such file or directory"),
            ("/stat/" + EncodedEntryURI.encode(bucket: "ghost", key: "k"), 631, "no such bucket"),
            ("/stat/" + EncodedEntryURI.encode(bucket: "demo", key: nil), 400, "bad request"),
            ("/stat/%%%", 400, "bad request"),
        ] {
            let response = await harness.send(.get, target, headers: qbox(target))
            #expect(response.status == status, "\(target)")
            #expect(response.errorText == error, "\(target)")
        }
    }

    @Test("management signature refused: missing, unknown AK, wrong secret, other path, stale date → 401")
    func refused() async {
        let harness = UpServerHarness()
        let target = "/stat/" + entry("k")
        let stale = QiniuDate.format(harness.now - 3600)
        let staleAuth = QiniuSignature.sign(
            method: "GET", target: target, host: "h", contentType: nil, headers: [("X-Qiniu-Date", stale)], body: [],
            accessKey: UpServerHarness.accessKey, mac: mac)
        let cases: [HTTPHeaders] = [
            [:],
            qbox(target, accessKey: "ghost-ak"),
            qbox(target, mac: HMACSHA1(key: Array("wrong".utf8))),
            qbox("/stat/" + entry("other")),
            ["Authorization": "UpToken x:y:z"],
            ["Authorization": staleAuth, "Host": "h", "X-Qiniu-Date": stale],
        ]
        for headers in cases {
            let response = await harness.send(.get, target, headers: headers)
            #expect(response.status == 401, "\(headers.fields)")
            #expect(response.errorText == "bad token")
        }
        let download = await harness.send(.get, "/download/" + entry("k"))
        #expect(download.status == 401)
        let outbox = await harness.send(.get, "/admin/outbox")
        #expect(outbox.status == 401)
    }

    @Test("download from the in-memory store: segments in order, stored mime, ETag")
    func downloadInMemory() async throws {
        let harness = UpServerHarness()
        try await put(harness, key: "a", pieces: [Array("abc".utf8), Array("def".utf8)])
        let target = "/download/" + entry("a")
        let response = await harness.send(.get, target, headers: qbox(target))
        #expect(response.status == 200)
        #expect(response.text == "abcdef")
        #expect(response.headers["Content-Type"] == "text/plain")
        #expect(response.headers["ETag"] == "\"Fetag\"")
        let missing = "/download/" + entry("b")
        #expect(await harness.send(.get, missing, headers: qbox(missing)).status == 612)
    }
}
