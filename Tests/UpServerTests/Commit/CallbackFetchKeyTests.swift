import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// `callbackFetchKey=1` (qiniu-protocol.md §3.4): the callback reply names the final key and only
/// its `payload` is relayed to the uploader.
@Suite("callbackFetchKey")
struct CallbackFetchKeyTests {
    static func upload(_ harness: UpServerHarness) async -> Response {
        let token = harness.token(scope: "demo") { policy in
            policy.callbackUrl = "http://127.0.0.1:1/cb"
            policy.callbackBody = "key=$(key)"
            policy.callbackFetchKey = 1
        }
        return await FormUploadControllerTests.post(harness, FormUploadControllerTests.form(token: token))
    }

    @Test func theObjectMovesToTheKeyTheCallbackNamesAndOnlyThePayloadIsRelayed() async throws {
        let harness = UpServerHarness()
        harness.callbacks.script(.delivered(reply: Array(#"{"key":"renamed/hello.txt","payload":{"id":7}}"#.utf8)))
        let response = await Self.upload(harness)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["id"] as? Int == 7)
        #expect(response.json["key"] == nil)
        let renamed = await harness.index.object(bucket: "demo", key: "renamed/hello.txt")
        #expect(renamed?.etag == FormUploadControllerTests.helloEtag)
        #expect(await harness.index.object(bucket: "demo", key: FormUploadControllerTests.helloEtag) == nil)
        // The blobs now belong to the renamed object: it still reads back.
        let segment = try #require(renamed?.segments.first)
        #expect(try harness.store.read(segment.blob, range: 0..<segment.length) == FormUploadControllerTests.hello)
    }

    @Test func aReplyWithoutKeyAndPayloadIsACallbackFailure() async throws {
        let harness = UpServerHarness()
        harness.callbacks.script(.delivered(reply: Array(#"{"ok":true}"#.utf8)))
        let response = await Self.upload(harness)
        #expect(response.status == 579)
        // spec §3.4: 579 means stored, callback failed — the object stays under its key.
        #expect(await harness.index.object(bucket: "demo", key: FormUploadControllerTests.helloEtag) != nil)
    }
}
