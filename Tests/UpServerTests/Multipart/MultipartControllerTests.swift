import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// v2 init and complete (qiniu-protocol.md §5, §7.2), through the router in-process.
@Suite("up-server v2 multipart: init and complete")
struct MultipartControllerTests {
    @Test func initAnswersUploadIdAndExpireAt() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "big.bin")
        let response = await client.initiate()
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        let id = try #require(response.json["uploadId"] as? String)
        #expect(!id.isEmpty)
        // §5: present and non-zero; init + multipartLifetimeSeconds (7 days by default).
        #expect((response.json["expireAt"] as? Int).map(Int64.init) == harness.now + 7 * 86_400)
        let upload = try #require(await harness.index.upload(id: id))
        #expect(upload.bucket == UpServerHarness.bucket && upload.key == "big.bin")
    }

    @Test func initRefusesBucketAndKeyOutsideTheToken() async {
        let harness = UpServerHarness()
        var client = MultipartClient(harness: harness, token: harness.token(scope: "demo:mine"), key: "theirs")
        #expect((await client.initiate()).status == 403)
        client.key = "mine"
        #expect((await client.initiate()).status == 200)
        client.bucket = "other"
        #expect((await client.initiate()).status == 403)
        client.bucket = "missing"
        #expect((await client.initiate()).status == 631)
        client.bucket = UpServerHarness.bucket
        let unsigned = MultipartClient(harness: harness, token: "nope", key: "mine")
        #expect((await unsigned.initiate()).status == 401)
        // Later steps check the scope too: a token for another key cannot touch the upload.
        let id = await client.start()
        let stranger = MultipartClient(harness: harness, token: harness.token(scope: "demo:theirs"), key: "mine")
        #expect((await stranger.put(id, 1, [1])).status == 403)
        #expect((await stranger.list(id)).status == 403)
        #expect((await stranger.abort(id)).status == 403)
        // forceSaveKey ignores the client key, so any path key is let through to complete.
        let forced = MultipartClient(
            harness: harness, token: harness.token(scope: "demo:mine") { $0.saveKey = "mine"; $0.forceSaveKey = true },
            key: "whatever")
        #expect((await forced.initiate()).status == 200)
    }

    @Test func partsOutOfOrderIn4MiBLayoutGiveTheV1Etag() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "big.bin")
        let id = await client.start()
        let parts = MultipartPayload.split(MultipartPayload.nineMiB, mebibytes: [4, 4, 1])
        // §9.2: the SDK sends parts concurrently and out of order.
        let etags = await client.putAll(id, [parts[1], parts[0], parts[2]])
        let response = await client.complete(id, etags: etags, fname: "big.bin")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.json["hash"] as? String == Etag.of(MultipartPayload.nineMiB))
        #expect(response.json["hash"] as? String == "litJxRiN_qpEphigieYPgiWEx2e9")
        #expect(response.json["key"] as? String == "big.bin")
        let object = try #require(await harness.index.object(bucket: UpServerHarness.bucket, key: "big.bin"))
        #expect(object.fsize == 9 << 20 && object.segments.count == 3)
        // The object is the parts' blobs in order, byte for byte.
        var stored: [UInt8] = []
        for segment in object.segments { stored += try harness.store.read(segment.blob, range: 0..<segment.length) }
        #expect(stored == MultipartPayload.nineMiB)
        // §5: the uploadId is invalid after complete.
        let late = await client.put(id, 4, [1, 2, 3])
        #expect(late.status == 612 && late.errorText == "no such uploadId")
    }

    @Test(arguments: [
        ([2, 2, 2, 2, 1], "nohtidQTnnabY-QV0pDmct8Dan9d"),
        ([5, 4], "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z"),
        ([4, 4, 1], "litJxRiN_qpEphigieYPgiWEx2e9"),
    ])
    func hashFollowsSpecVectors(layout: [Int], expected: String) async {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "v2.bin")
        let id = await client.start()
        let etags = await client.putAll(id, MultipartPayload.split(MultipartPayload.nineMiB, mebibytes: layout))
        let response = await client.complete(id, etags: etags)
        #expect(response.status == 200)
        #expect(response.json["hash"] as? String == expected)
    }

    /// Complete sniffs part 1 for detectMime from what the part's upload recorded: no read back.
    @Test func completeSniffsTheFirstPartWithoutReadingItBack() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token { $0.detectMime = 1 }, key: "pic.txt")
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 600)
        let id = await client.start()
        let etags = await client.putAll(id, [(1, png)])
        let before = harness.store.readCount
        let reply = await client.complete(id, etags: etags)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(harness.store.readCount == before)
        #expect(await harness.index.object(bucket: "demo", key: "pic.txt")?.mimeType == "image/png")
    }

    @Test func completeChecksEtagsAndPartSizes() async {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let id = await client.start()
        let small = [UInt8](repeating: 7, count: 1000)
        let big = [UInt8](repeating: 9, count: MultipartPayload.mebibyte)
        var etags = await client.putAll(id, [(1, small), (2, big)])
        // Wrong etag, and a part that was never uploaded → 400.
        var wrong = etags
        wrong[2] = "FwrongwrongwrongwrongwrongA"
        #expect((await client.complete(id, etags: wrong)).status == 400)
        #expect((await client.complete(id, etags: [1: etags[1] ?? "", 3: "x"])).status == 400)
        // Parts not strictly ascending → 400 (CompleteMultipartRequest).
        let descending = CompleteMultipartRequest(parts: [
            .init(etag: etags[2] ?? "", partNumber: 2), .init(etag: etags[1] ?? "", partNumber: 1),
        ])
        #expect((await client.complete(id, descending)).status == 400)
        // A part under 1 MiB that is not last → 400 at complete (not at part time).
        #expect((await client.complete(id, etags: etags)).status == 400)
        // Alone (so last), the small part is fine; a gap in numbers is allowed too.
        etags[3] = (await client.put(id, 3, small)).json["etag"] as? String
        let response = await client.complete(id, etags: [2: etags[2] ?? "", 3: etags[3] ?? ""])
        #expect(response.status == 200)
        #expect(response.json["hash"] as? String == Etag.v2(parts: [
            Etag.Part(digest: hasherDigest(big), size: Int64(big.count)),
            Etag.Part(digest: hasherDigest(small), size: Int64(small.count)),
        ]))
    }

    @Test func unusedPartsAreReleasedAtComplete() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "k")
        let id = await client.start()
        let etags = await client.putAll(id, [(1, [1, 2, 3]), (2, [4, 5, 6])])
        #expect(try harness.store.list().count == 2)
        #expect((await client.complete(id, etags: [1: etags[1] ?? ""])).status == 200)
        #expect(try harness.store.list().count == 1)
    }

    @Test func noKeyUsesSaveKeyAndCompleteCarriesFnameMimeVarsAndMetadata() async throws {
        let harness = UpServerHarness()
        let token = harness.token {
            $0.saveKey = "up/$(etag)$(ext)"
            $0.returnBody = #"{"key":"$(key)","fname":"$(fname)","mime":"$(mimeType)","foo":"$(x:foo)","size":$(fsize)}"#
        }
        let client = MultipartClient(harness: harness, token: token, key: nil)
        #expect(client.path(.uploads).contains("/objects/~/uploads"))
        let id = await client.start()
        let body: [UInt8] = Array("hello v2".utf8)
        let etag = try #require((await client.put(id, 1, body)).json["etag"] as? String)
        let response = await client.complete(id, CompleteMultipartRequest(
            parts: [.init(etag: etag, partNumber: 1)], fname: "a.txt", mimeType: "text/plain",
            customVariables: [("x:foo", "bar")], metadata: [("x-qn-meta-color", "red")]))
        #expect(response.status == 200)
        let key = "up/" + Etag.of(body) + ".txt"
        #expect(response.json["key"] as? String == key)
        #expect(response.json["fname"] as? String == "a.txt")
        #expect(response.json["mime"] as? String == "text/plain")
        #expect(response.json["foo"] as? String == "bar")
        #expect(response.json["size"] as? Int == body.count)
        let object = try #require(await harness.index.object(bucket: UpServerHarness.bucket, key: key))
        #expect(object.metadata == ["x-qn-meta-color": "red"])
    }

    @Test func callbackReplyIsRelayedAndFailureIs579() async {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:cb.bin") {
            $0.callbackUrl = "http://127.0.0.1:1/cb"
            $0.callbackBody = "key=$(key)&hash=$(etag)"
        }
        let client = MultipartClient(harness: harness, token: token, key: "cb.bin")
        let id = await client.start()
        let etags = await client.putAll(id, [(1, [1, 2, 3])])
        harness.callbacks.script(.delivered(reply: Array(#"{"stored":"yes"}"#.utf8)))
        let relayed = await client.complete(id, etags: etags)
        #expect(relayed.status == 200 && relayed.text == #"{"stored":"yes"}"#)
        #expect(harness.callbacks.sent.last?.body == "key=cb.bin&hash=\(Etag.of([1, 2, 3] as [UInt8]))")

        let other = MultipartClient(harness: harness, token: token, key: "cb.bin")
        let second = await other.start()
        let otherEtags = await other.putAll(second, [(1, [4, 5, 6])])
        harness.callbacks.script(.failed(reason: "callback answered 500"))
        let failed = await other.complete(second, etags: otherEtags)
        #expect(failed.status == 579 && failed.errorText == "callback answered 500")
        // §3.4: stored anyway.
        let object = await harness.index.object(bucket: UpServerHarness.bucket, key: "cb.bin")
        #expect(object?.etag == Etag.of([4, 5, 6] as [UInt8]))
    }

    @Test func repeatedCompleteReturnsTheFirstResult() async {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "again")
        let id = await client.start()
        let etags = await client.putAll(id, [(1, [1, 2, 3])])
        let first = await client.complete(id, etags: etags)
        #expect(first.status == 200)
        // DESIGN.md: an identical repeat gets the first answer, even with a fresh token.
        let fresh = MultipartClient(harness: harness, token: harness.token(), key: "again")
        let repeated = await fresh.complete(id, etags: etags)
        #expect(repeated.status == 200 && repeated.bodyBytes == first.bodyBytes)
        // Another parts list, or another key, is the spec's 612.
        #expect((await client.complete(id, etags: [1: "Fother"])).status == 612)
        let elsewhere = MultipartClient(harness: harness, token: harness.token(), key: "elsewhere")
        #expect((await elsewhere.complete(id, etags: etags)).status == 612)
        // After expireAt the record no longer answers.
        harness.clock.advance(by: 7 * 86_400)
        let later = MultipartClient(harness: harness, token: harness.token(), key: "again")
        #expect((await later.complete(id, etags: etags)).errorText == "no such uploadId")
    }

    @Test func repeatAfterA579RunsTheCallbackAgainThenKeepsItsReply() async {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:cb.bin") {
            $0.callbackUrl = "http://127.0.0.1:1/cb"
            $0.callbackBody = "key=$(key)&hash=$(etag)&fsize=$(fsize)"
        }
        let client = MultipartClient(harness: harness, token: token, key: "cb.bin")
        let id = await client.start()
        let etags = await client.putAll(id, [(1, [1, 2, 3])])
        harness.callbacks.script(.failed(reason: "callback answered 503"))
        #expect((await client.complete(id, etags: etags)).status == 579)
        // The client retries the complete (its 579 is final for the SDK, but a lost reply is not):
        // the callback runs again with the stored object's variables and its reply is the answer.
        harness.callbacks.script(.delivered(reply: Array(#"{"stored":"late"}"#.utf8)))
        let retried = await client.complete(id, etags: etags)
        #expect(retried.status == 200 && retried.text == #"{"stored":"late"}"#)
        #expect(harness.callbacks.sent.count == 2)
        #expect(harness.callbacks.sent.last?.body == "key=cb.bin&hash=\(Etag.of([1, 2, 3] as [UInt8]))&fsize=3")
        // Recorded now: a third repeat answers without another callback.
        #expect((await client.complete(id, etags: etags)).text == #"{"stored":"late"}"#)
        #expect(harness.callbacks.sent.count == 2)
    }

    @Test func sameContentUnderInsertOnlyScopeSucceedsAndReleasesTheUpload() async throws {
        let harness = UpServerHarness()
        let client = MultipartClient(harness: harness, token: harness.token(), key: "dup")
        let first = await client.start()
        #expect((await client.complete(first, etags: await client.putAll(first, [(1, [1, 2, 3])]))).status == 200)
        let second = await client.start()
        let etags = await client.putAll(second, [(1, [1, 2, 3])])
        let response = await client.complete(second, etags: etags)
        // §1.3: bucket scope is insert-only, but identical content is a success.
        #expect(response.status == 200)
        #expect(await harness.index.upload(id: second)?.state == .completed)
        #expect(try harness.store.list().count == 1)
        // Its repeat (the reply was lost) gets the same answer, not 612.
        let repeated = await client.complete(second, etags: etags)
        #expect(repeated.status == 200 && repeated.bodyBytes == response.bodyBytes)
        let third = await client.start()
        #expect((await client.complete(third, etags: await client.putAll(third, [(1, [9])]))).status == 614)
    }

    private func hasherDigest(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = EtagHasher()
        hasher.update(bytes)
        return hasher.finalize().partDigest
    }
}
