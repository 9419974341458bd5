import Basics
import Foundation
import HTTPKit
import NativeCrypto
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// `GET /list` paging with a delimiter and `GET /dl/…` (public buckets, ranges across segments),
/// in-process over the in-memory stores.
@Suite("list and download")
struct ListAndDownloadTests {
    let controller = ManagementControllerTests()

    func list(_ harness: UpServerHarness, _ query: String) async -> Response {
        let target = "/list?" + query
        return await harness.send(.get, target, headers: controller.qbox(target))
    }

    @Test func pagesThroughPrefixesAndItemsWithoutRepeatsOrGaps() async throws {
        let harness = UpServerHarness()
        let keys = ["a/1", "a/2", "a/3", "b", "c/x/1", "c/y", "d", "é/1"]
        for key in keys { try await controller.put(harness, key: key, pieces: [Array(key.utf8)]) }
        var seen: [String] = [], marker = "", pages = 0
        repeat {
            let page = await list(harness, "bucket=demo&delimiter=%2F&limit=2" + (marker.isEmpty ? "" : "&marker=\(marker)"))
            #expect(page.status == 200)
            seen += (page.json["commonPrefixes"] as? [String] ?? [])
            seen += (page.json["items"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
            marker = page.json["marker"] as? String ?? ""
            pages += 1
        } while !marker.isEmpty && pages < 10
        #expect(seen == ["a/", "b", "c/", "d", "é/"] && pages == 3)
        let nested = await list(harness, "bucket=demo&prefix=c%2F&delimiter=%2F")
        #expect(nested.json["commonPrefixes"] as? [String] == ["c/x/"])
        #expect((nested.json["items"] as? [[String: Any]])?.first?["key"] as? String == "c/y")
        let plain = await list(harness, "bucket=demo&prefix=a%2F")
        #expect(plain.json["commonPrefixes"] == nil && plain.json["marker"] as? String == "")
        #expect((plain.json["items"] as? [[String: Any]])?.compactMap { $0["fsize"] as? Int } == [3, 3, 3])
        for (query, status) in [("prefix=a", 400), ("bucket=ghost", 631), ("bucket=demo&marker=%%%", 640),
                                ("bucket=demo&limit=x", 400)] {
            #expect(await list(harness, query).status == status, "\(query)")
        }
        #expect(await harness.send(.get, "/list?bucket=demo").status == 401)
    }

    @Test func publicBucketsNeedNoTokenAndRangesSpanSegments() async throws {
        let harness = UpServerHarness { $0.publicBuckets = ["demo"] }
        try await controller.put(harness, key: "dir/a b.txt", pieces: [Array("hello ".utf8), Array("world".utf8)])
        let whole = await harness.send(.get, "/dl/demo/dir/a%20b.txt")
        #expect(whole.status == 200 && whole.text == "hello world" && whole.headers["Accept-Ranges"] == "bytes")
        let across = await harness.send(.get, "/dl/demo/dir/a%20b.txt", headers: ["Range": "bytes=4-7"])
        #expect(across.status == 206 && across.text == "o wo" && across.headers["Content-Range"] == "bytes 4-7/11")
        let past = await harness.send(.get, "/dl/demo/dir/a%20b.txt", headers: ["Range": "bytes=11-"])
        #expect(past.status == 416 && past.headers["Content-Range"] == "bytes */11")
        #expect(past.errorText == "requested range not satisfiable")
        #expect(await harness.send(.get, "/dl/demo/missing").status == 612)
        #expect(await harness.send(.get, "/dl/ghost/k").status == 401)  // not public: the token comes first
        // "other" is not public: a token is needed, and one for another path does not do.
        try await controller.put(harness, key: "k", pieces: [[1, 2, 3]], bucket: "other")
        #expect(await harness.send(.get, "/dl/other/k").status == 401)
        let signed = DownloadToken.sign(
            url: "http://up.test/dl/other/k", deadline: harness.now + 60, accessKey: UpServerHarness.accessKey,
            mac: harness.mac)
        let target = String(signed.dropFirst("http://up.test".count))
        let ok = await harness.send(.get, target, headers: ["Host": "up.test"])
        #expect(ok.status == 200 && ok.bodyBytes == [1, 2, 3] && ok.headers["Cache-Control"] == "private, no-store")
        #expect(await harness.send(.get, target, headers: ["Host": "evil.test"]).status == 401)
        harness.clock.advance(by: 61)
        #expect(await harness.send(.get, target, headers: ["Host": "up.test"]).errorText == "expired token")
    }

    @Test func publicBucketsMustBeBuckets() {
        let configuration = UpServerConfiguration(keys: ["a": "b"], buckets: ["demo"], publicBuckets: ["demo", "pics"])
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
