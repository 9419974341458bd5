import Basics
import BizServer
import Foundation
import HTTPKit
import Outbox
import Synchronization
import TestSupport
import Testing
import UpCore

@Suite("POST /v1/callback")
struct CallbackControllerTests {
    @Test func aQBoxFormCallbackIsRecordedAndAnsweredWithTheRecord() async throws {
        let harness = BizServerHarness()
        let (issued, policy) = try await harness.issuedPolicy(#"{"key":"demo/七牛 & co.txt","vars":{"x:color":"red"}}"#)
        let callback = harness.callback(for: policy, key: "demo/七牛 & co.txt", fname: "a b&c.txt")
        #expect(callback.target == "/v1/callback")
        let response = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(response.status == 200, "\(response.text)")
        let reply = try response.jsonObject()
        #expect(reply["key"] as? String == "demo/七牛 & co.txt")
        #expect(reply["hash"] as? String == "Fqr0xh3cxeii2r7eDztILNmuqUNN")
        #expect(reply["fsize"] as? Int == 5)
        #expect(reply["bucket"] as? String == "demo")
        #expect(reply["mimeType"] as? String == "text/plain")
        #expect(reply["fname"] as? String == "a b&c.txt")
        #expect(reply["endUser"] as? String == "demo")
        #expect(reply["clientId"] as? String == "demo")
        #expect(reply["traceId"] as? String == issued["traceId"] as? String)
        #expect(reply["vars"] as? [String: String] == ["x:color": "red", "x:app": "upgate-test"])
        #expect((reply["id"] as? String)?.hasPrefix("up_") == true)
        #expect(reply["receivedAt"] as? String == "2030-03-17T17:46:40.000Z")
        #expect(await harness.store.count() == 1)
        #expect(harness.server.metrics.value("upgate_biz_callbacks_accepted_total") == 1)
    }

    @Test func aRedeliveredCallbackGetsTheSameReplyAndNoSecondRow() async throws {
        let harness = BizServerHarness()
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/a"}"#)
        let callback = harness.callback(for: policy, key: "demo/a")
        let first = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        harness.clock.advance(by: 60)
        let second = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(first.status == 200 && second.status == 200)
        #expect(first.bodyBytes == second.bodyBytes)
        #expect(await harness.store.count() == 1)
        #expect(harness.server.metrics.value("upgate_biz_callbacks_duplicate_total") == 1)
    }

    @Test func theSameKeyWithAnotherHashIsANewVersion() async throws {
        let harness = BizServerHarness()
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/a"}"#)
        let v1 = harness.callback(for: policy, key: "demo/a", etag: "FirstEtag")
        let v2 = harness.callback(for: policy, key: "demo/a", etag: "SecondEtag")
        let r1 = await harness.postQBox(target: v1.target, body: v1.body, contentType: v1.contentType)
        let r2 = await harness.postQBox(target: v2.target, body: v2.body, contentType: v2.contentType)
        #expect(try r1.jsonObject()["id"] as? String != r2.jsonObject()["id"] as? String)
        #expect(await harness.store.count() == 2)
    }

    @Test func aQBoxJSONCallbackIsAcceptedThroughItsSignedBodySha1() async throws {
        let harness = BizServerHarness { $0.callbackBodyType = .json }
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/j.json"}"#)
        let callback = harness.callback(for: policy, key: "demo/j.json", mimeType: "application/json")
        #expect(callback.target.hasPrefix("/v1/callback?bodySha1="))
        let response = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(response.status == 200, "\(response.text)")
        #expect(try response.jsonObject()["mimeType"] as? String == "application/json")

        // QBox does not sign JSON bodies: a swapped body with the same valid signature is caught by bodySha1.
        let swapped = Array(String(decoding: callback.body, as: UTF8.self).replacingOccurrences(of: "\"fsize\":5", with: "\"fsize\":6").utf8)
        let tampered = await harness.postQBox(target: callback.target, body: swapped, contentType: callback.contentType)
        #expect(tampered.status == 401)
        #expect(tampered.errorText == "callback body does not match bodySha1")
        let unbound = await harness.postQBox(target: "/v1/callback", body: callback.body, contentType: callback.contentType)
        #expect(unbound.status == 401)
    }

    @Test func aQiniuSchemeJSONCallbackWithAFreshSignedDateIsAccepted() async throws {
        let harness = BizServerHarness()
        let body = Array(#"{"bucket":"demo","key":"demo/q","hash":"FtaXAk7ZP_YlMw0FA5Gt6ZzVy92t","fsize":4194304,"clientId":"demo"}"#.utf8)
        let now = Int64(harness.clock.now())
        let accepted = await harness.postQiniu(target: "/v1/callback", body: body, contentType: "application/json", date: now - 200)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(try accepted.jsonObject()["fsize"] as? Int == 4_194_304)

        let tampered = await harness.postQiniu(
            target: "/v1/callback", body: Array(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "4194304", with: "1").utf8),
            contentType: "application/json", date: now, signedBody: body)
        #expect(tampered.status == 401)
        #expect(tampered.errorText == "bad callback signature")
    }

    @Test func replayProtectionRefusesSignedDatesOutsideTheWindow() async throws {
        let harness = BizServerHarness(replay: .init(maxClockSkewSeconds: 300))
        let body = Array("bucket=demo&key=demo%2Fr&hash=H&fsize=1".utf8)
        let now = Int64(harness.clock.now())
        for (date, status) in [(now - 301, 401), (now + 301, 401), (now - 300, 200), (now + 300, 200)] {
            let response = await harness.postQiniu(
                target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType, date: date)
            #expect(response.status == status, "date offset \(date - now): \(response.text)")
            if status == 401 { #expect(response.errorText == "callback date outside the allowed window") }
        }
        #expect(harness.server.metrics.value("upgate_biz_callbacks_rejected_total", ["stale_date"]) == 2)
    }

    @Test func requireSignedDateRefusesQBoxAndUndatedQiniuCallbacks() async throws {
        let harness = BizServerHarness(replay: .init(maxClockSkewSeconds: 300, requireSignedDate: true))
        let body = Array("bucket=demo&key=k&hash=H&fsize=1".utf8)
        let qbox = await harness.postQBox(target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType)
        #expect(qbox.status == 401)
        #expect(qbox.errorText == "callback must carry a signed X-Qiniu-Date")
        let undated = await harness.postQiniu(target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType, date: nil)
        #expect(undated.status == 401)
        let dated = await harness.postQiniu(
            target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType, date: Int64(harness.clock.now()))
        #expect(dated.status == 200)
    }

    @Test func aFormBodyAlteredAfterSigningIsRefusedAndNothingRecorded() async throws {
        let harness = BizServerHarness()
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/a"}"#)
        let callback = harness.callback(for: policy, key: "demo/a")
        let altered = Array(String(decoding: callback.body, as: UTF8.self).replacingOccurrences(of: "fsize=5", with: "fsize=6").utf8)
        let response = await harness.postQBox(
            target: callback.target, body: altered, contentType: callback.contentType, signedBody: callback.body)
        #expect(response.status == 401)
        #expect(await harness.store.count() == 0)
    }

    @Test(
        "Signature problems are 401",
        arguments: [
            (nil as String?, "missing callback signature", "missing_signature"),
            ("Bearer x", "bad callback signature", "bad_signature"),
            ("QBox test-ak", "bad callback signature", "bad_signature"),
            ("QBox test-ak:!!notbase64", "bad callback signature", "bad_signature"),
            ("QBox test-ak:AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "bad callback signature", "bad_signature"),
            ("QBox other-ak:AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "bad callback signature", "unknown_access_key"),
        ])
    func badSignatures(authorization: String?, error: String, reason: String) async {
        let harness = BizServerHarness()
        var headers: HTTPHeaders = ["Content-Type": QBoxSignature.formContentType]
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        let response = await harness.send(.post, "/v1/callback", headers: headers, body: Array("bucket=b&key=k&hash=h&fsize=1".utf8))
        #expect(response.status == 401)
        #expect(response.errorText == error)
        #expect(harness.server.metrics.value("upgate_biz_callbacks_rejected_total", [reason]) == 1)
    }

    @Test(
        "Signed but malformed bodies are 400",
        arguments: [
            ("key=k&hash=h&fsize=1", "missing bucket"),
            ("bucket=b&hash=h&fsize=1", "missing key"),
            ("bucket=b&key=k&fsize=1", "missing hash"),
            ("bucket=b&key=k&hash=h", "missing fsize"),
            ("bucket=b&key=k&hash=h&fsize=x", "fsize must be a non-negative integer"),
            ("bucket=b&key=k&hash=h&fsize=-3", "fsize must be a non-negative integer"),
            ("bucket=b&key=k&hash=h&fsize=1&key=k2", "duplicate key"),
            ("bucket=b&key=%ZZ&hash=h&fsize=1", "body is not valid form encoding"),
        ])
    func malformedBodies(body: String, error: String) async throws {
        let harness = BizServerHarness()
        let response = await harness.postQBox(target: "/v1/callback", body: Array(body.utf8), contentType: QBoxSignature.formContentType)
        #expect(response.status == 400)
        #expect(response.errorText == error)
        #expect(await harness.store.count() == 0)
    }

    @Test func oversizedCallbackBodiesAre413() async {
        let harness = BizServerHarness()
        let body = Array(("bucket=b&key=k&hash=h&fsize=1&pad=" + String(repeating: "x", count: 70_000)).utf8)
        let response = await harness.postQBox(target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType)
        #expect(response.status == 413)
    }

    /// The record store failing (its SQLite disk full) is a 503 the up-server's outbox retries,
    /// never a crash or a 200 without a record; the redelivery once it recovers is recorded once.
    @Test func aStoreThatCannotWriteAnswers503AndTheRedeliveryIsRecordedOnce() async throws {
        let failing = DiskSwitch()
        let harness = BizServerHarness(wrapStore: { FailingUploadRecordStore(base: $0, failing: failing) })
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/full"}"#)
        let callback = harness.callback(for: policy, key: "demo/full")
        let refused = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(refused.status == 503)
        #expect(refused.errorText == "upload store unavailable, retry later")
        #expect(await harness.store.count() == 0)
        #expect(harness.server.metrics.value("upgate_biz_store_errors_total") == 1)
        #expect(harness.logs.capturedLines.contains { $0.contains("store failed") && $0.contains("database or disk is full") })

        failing.isFull.store(false, ordering: .relaxed)
        let recorded = await harness.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(recorded.status == 200)
        #expect(try recorded.jsonObject()["key"] as? String == "demo/full")
        #expect(await harness.store.count() == 1)
    }
}

/// Whether ``FailingUploadRecordStore`` refuses writes (it starts refusing).
private final class DiskSwitch: Sendable {
    let isFull = Atomic<Bool>(true)
}

/// An ``UploadRecordStore`` whose writes fail as SQLite's do on a full disk while `failing` is set.
private struct FailingUploadRecordStore: UploadRecordStore {
    let base: InMemoryUploadRecordStore
    let failing: DiskSwitch

    struct DiskFull: Error, CustomStringConvertible {
        var description: String { "SQLITE_FULL: database or disk is full" }
    }

    func record(
        _ upload: NewUploadRecord, receivedAt: Int64, webhooks: @escaping @Sendable (UploadRecord) -> [OutboxMessage]
    ) async throws -> (record: UploadRecord, created: Bool) {
        if failing.isFull.load(ordering: .relaxed) { throw DiskFull() }
        return try await base.record(upload, receivedAt: receivedAt, webhooks: webhooks)
    }

    var webhookDeliveries: any OutboxStore { base.webhookDeliveries }

    func upload(id: String) async throws -> UploadRecord? { await base.upload(id: id) }

    func uploads(_ query: UploadQuery) async throws -> [UploadRecord]? { await base.uploads(query) }

    func uploadSizes(clientID: String, endUser: String, since: Int64) async throws -> [UploadSize] {
        await base.uploadSizes(clientID: clientID, endUser: endUser, since: since)
    }

    func count() async throws -> Int { await base.count() }
}
