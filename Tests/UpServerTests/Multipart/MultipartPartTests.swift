import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// v2 upload part, abort and list parts (qiniu-protocol.md §5), through the router in-process.
@Suite("up-server v2 multipart: parts, abort, list")
struct MultipartPartTests {
    @Test func partAnswersEtagAndHexMD5() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let id = await client.start()
        let bytes = Array("part one".utf8)
        let response = await client.put(id, 1, bytes)
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        // The part etag is the part's own v1 etag; md5 is always present (§5 legacy `del ret['md5']`).
        #expect(response.json["etag"] as? String == Etag.of(bytes))
        #expect(response.json["md5"] as? String == Hex.encode(MD5.hash(bytes)))
        let blob = try #require(try harness.store.list().first)
        #expect(harness.store.syncCount(of: blob) >= 1)
    }

    @Test func contentMD5AcceptsHexAndBase64AndRefusesMismatch() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let id = await client.start()
        let bytes = [UInt8](repeating: 0xFB, count: 300)
        let md5 = MD5.hash(bytes)
        #expect((await client.put(id, 1, bytes, md5: Hex.encode(md5))).status == 200)
        #expect((await client.put(id, 2, bytes, md5: Hex.encode(md5).uppercased())).status == 200)
        #expect((await client.put(id, 3, bytes, md5: Data(md5).base64EncodedString())).status == 200)
        #expect((await client.put(id, 4, bytes, md5: URLSafeBase64.encode(md5))).status == 200)
        #expect((await client.put(id, 5, bytes, md5: "")).status == 200)
        #expect(try harness.store.list().count == 5)
        let mismatch = await client.put(id, 6, bytes, md5: Hex.encode(MD5.hash([1])))
        #expect(mismatch.status == 400 && mismatch.errorText == "Content-MD5 mismatch")
        #expect((await client.put(id, 6, bytes, md5: "not-an-md5")).status == 400)
        // A refused part leaves no blob and no part behind.
        #expect(try harness.store.list().count == 5)
        #expect((await client.list(id)).json["parts"].map { ($0 as? [Any])?.count } == 5)
    }

    @Test func reuploadReplacesThePartAndItsBlob() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let id = await client.start()
        _ = await client.put(id, 1, [1, 1, 1])
        let second = await client.put(id, 1, [2, 2])
        #expect(second.status == 200)
        #expect(try harness.store.list().count == 1)
        let parts = try #require((await client.list(id)).json["parts"] as? [[String: Any]])
        #expect(parts.count == 1)
        #expect(parts.first?["etag"] as? String == second.json["etag"] as? String)
        #expect(parts.first?["size"] as? Int == 2)
    }

    @Test func unknownAbortedAndMismatchedUploadIdsAre612() async {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "a")
        let unknown = await client.put("0123456789abcdef0123456789abcdef", 1, [1])
        #expect(unknown.status == 612 && unknown.text == #"{"error":"no such uploadId"}"#)

        let id = await client.start()
        // §5: the uploadId is bound to bucket and key.
        var otherKey = client
        otherKey.key = "b"
        #expect((await otherKey.put(id, 1, [1])).errorText == "no such uploadId")
        var noKey = client
        noKey.key = nil
        #expect((await noKey.put(id, 1, [1])).status == 612)
        #expect((await otherKey.complete(id, etags: [1: "x"])).status == 612)
        #expect((await otherKey.abort(id)).status == 612)
        #expect((await otherKey.list(id)).status == 612)
        #expect(try! harness.store.list().isEmpty)

        _ = await client.putAll(id, [(1, [1]), (2, [2])])
        let aborted = await client.abort(id)
        #expect(aborted.status == 200 && aborted.text == "{}")
        #expect(try! harness.store.list().isEmpty)
        #expect((await client.put(id, 3, [3])).errorText == "no such uploadId")
        #expect((await client.abort(id)).status == 612)
        #expect((await client.list(id)).status == 612)
        #expect((await client.complete(id, etags: [1: "x"])).status == 612)
    }

    @Test func expiredUploadIdIs612() async {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(lifetime: 30 * 86_400), key: "k")
        let id = await client.start()
        let etags = await client.putAll(id, [(1, [1, 2])])
        harness.clock.advance(by: 7 * 86_400 - 1)
        #expect((await client.list(id)).status == 200)
        harness.clock.advance(by: 1)
        #expect((await client.put(id, 2, [3])).errorText == "no such uploadId")
        #expect((await client.complete(id, etags: etags)).errorText == "no such uploadId")
        #expect((await client.list(id)).status == 612)
    }

    @Test func fsizeLimitCountsEveryPart() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token { $0.fsizeLimit = 1000 }, key: "k")
        let id = await client.start()
        #expect((await client.put(id, 1, [UInt8](repeating: 1, count: 600))).status == 200)
        let over = await client.put(id, 2, [UInt8](repeating: 2, count: 401))
        #expect(over.status == 413)
        #expect(try harness.store.list().count == 1)
        // Re-uploading part 1 does not count its old bytes twice.
        #expect((await client.put(id, 1, [UInt8](repeating: 1, count: 1000))).status == 200)
        #expect((await client.put(id, 2, [2])).status == 413)
        // An announced Content-Length over the limit is refused before the body is read.
        var headers = UpServerHarness.auth(client.token)
        headers.set(name: "Content-Length", value: String(2 << 30))
        let announced = await harness.send(.put, client.path(.part(uploadID: id, partNumber: 3)), headers: headers)
        #expect(announced.status == 413)
    }

    @Test func listPartsPagesWithEitherMarkerSpelling() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let id = await client.start()
        _ = await client.putAll(id, [(5, [5]), (1, [1]), (3, [3, 3]), (2, [2]), (4, [4])])

        let first = await client.list(id, query: "max-parts=2")
        #expect(first.status == 200)
        #expect(first.json["uploadId"] as? String == id)
        #expect((first.json["expireAt"] as? Int).map(Int64.init) == harness.now + 7 * 86_400)
        let firstParts = try #require(first.json["parts"] as? [[String: Any]])
        #expect(firstParts.map { $0["partNumber"] as? Int } == [1, 2])
        #expect(first.json["partNumberMarker"] as? Int == 2)
        #expect(firstParts.first?["putTime"] as? Int == Int(harness.now))
        #expect(firstParts.first?["etag"] as? String == Etag.of([1] as [UInt8]))
        #expect(firstParts.first?["size"] as? Int == 1)

        let second = await client.list(id, query: "max-parts=2&part-number-marker=2")
        #expect((second.json["parts"] as? [[String: Any]])?.map { $0["partNumber"] as? Int } == [3, 4])
        let third = await client.list(id, query: "max-parts=2&part-number_marker=4")
        #expect((third.json["parts"] as? [[String: Any]])?.map { $0["partNumber"] as? Int } == [5])
        #expect(third.json["partNumberMarker"] as? Int == 0)

        let all = await client.list(id, query: "max-parts=5000")
        #expect((all.json["parts"] as? [Any])?.count == 5 && all.json["partNumberMarker"] as? Int == 0)
        #expect((await client.list(id, query: "max-parts=abc")).status == 400)
        #expect((await client.list(id, query: "max-parts=0")).status == 400)
    }

    @Test func wrongMethodAndMalformedPathsAreRefused() async {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let auth = UpServerHarness.auth(client.token)
        #expect((await harness.send(.put, client.path(.uploads), headers: auth)).status == 405)
        #expect((await harness.send(.get, client.path(.uploads), headers: auth)).status == 405)
        #expect((await harness.send(.post, client.path(.part(uploadID: "x", partNumber: 1)), headers: auth)).status == 405)
        #expect((await harness.send(.put, "/buckets/demo/objects/k/uploads/x/0", headers: auth)).status == 400)
        #expect((await harness.send(.put, "/buckets/demo/objects/k/uploads/x/10001", headers: auth)).status == 400)
        #expect((await harness.send(.post, "/buckets/demo/objects/%%%/uploads", headers: auth)).status == 400)
    }
}
