import HTTPKit
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// Refusals of `POST /` (qiniu-protocol.md §6, §1.2, §8): the status, and that nothing is left
/// behind — no object, no blob.
@Suite("form upload errors")
struct FormUploadErrorTests {
    typealias Form = FormUploadControllerTests

    static func expectNothingStored(_ harness: UpServerHarness) async throws {
        #expect(try harness.store.list().isEmpty)
        #expect(await harness.index.knownBlobs().isEmpty)
    }

    @Test func crc32MismatchIs406AndNothingStays() async throws {
        let harness = UpServerHarness()
        let response = await Form.post(harness, Form.form(token: harness.token(), fields: [("key", "x"), ("crc32", "1")]))
        #expect(response.status == 406)
        #expect(await harness.index.object(bucket: "demo", key: "x") == nil)
        try await Self.expectNothingStored(harness)
    }

    @Test func malformedCRC32Is400() async throws {
        let harness = UpServerHarness()
        let response = await Form.post(harness, Form.form(token: harness.token(), fields: [("crc32", "abc")]))
        #expect(response.status == 400)
        try await Self.expectNothingStored(harness)
    }

    @Test func missingTokenIs401TokenNotSpecified() async throws {
        let harness = UpServerHarness()
        let response = await Form.post(harness, Form.form(token: nil, fields: [("key", "x")]))
        #expect(response.status == 401)
        #expect(response.errorText == "token not specified")
        let empty = await Form.post(harness, Form.form(token: ""))
        #expect(empty.status == 401)
        #expect(empty.errorText == "token not specified")
        try await Self.expectNothingStored(harness)
    }

    @Test func tokenAfterTheFileIs400() async throws {
        let harness = UpServerHarness()
        var form = MultipartBody()
        form.file(Form.hello)
        form.field("token", harness.token())
        let response = await Form.post(harness, form)
        #expect(response.status == 400)
        #expect(response.errorText?.contains("token") == true)
        try await Self.expectNothingStored(harness)
    }

    @Test func expiredTokenIs401() async throws {
        let harness = UpServerHarness()
        let response = await Form.post(harness, Form.form(token: harness.token(lifetime: -1)))
        #expect(response.status == 401)
        #expect(response.errorText == "expired token")
        try await Self.expectNothingStored(harness)
    }

    @Test func badTokenIs401AndUnknownBucket631() async throws {
        let harness = UpServerHarness()
        let bad = await Form.post(harness, Form.form(token: "test-ak:nope:nope"))
        #expect(bad.status == 401)
        #expect(bad.errorText == "bad token")
        let bucket = await Form.post(harness, Form.form(token: harness.token(scope: "nosuch")))
        #expect(bucket.status == 631)
        try await Self.expectNothingStored(harness)
    }

    @Test func missingFileIs400() async throws {
        let harness = UpServerHarness()
        let response = await Form.post(harness, Form.form(token: harness.token(), fields: [("key", "x")], file: nil))
        #expect(response.status == 400)
        #expect(response.errorText == "file is not specified in multipart")
    }

    @Test func secondFilePartIs400() async throws {
        let harness = UpServerHarness()
        var form = Form.form(token: harness.token())
        form.file(Form.hello)
        let response = await Form.post(harness, form)
        #expect(response.status == 400)
        try await Self.expectNothingStored(harness)
    }

    @Test(arguments: [
        "text/plain", "multipart/form-data", "multipart/mixed; boundary=687e0264638e43982283c7dcee4b44b3",
        "multipart/form-data; boundary=other",
    ])
    func badContentTypeOrBoundaryIs400(_ contentType: String) async throws {
        let harness = UpServerHarness()
        let form = Form.form(token: harness.token())
        let response = await harness.send(.post, "/", headers: ["Content-Type": contentType], body: form.body)
        #expect(response.status == 400)
        try await Self.expectNothingStored(harness)
    }

    @Test func truncatedBodyIs400AndNothingStays() async throws {
        let harness = UpServerHarness()
        let form = Form.form(token: harness.token())
        let response = await harness.send(.post, "/", headers: form.headers, body: Array(form.body.dropLast(10)))
        #expect(response.status == 400)
        try await Self.expectNothingStored(harness)
    }

    @Test func keyOutsideScopeIs403() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:allowed.txt")
        let response = await Form.post(harness, Form.form(token: token, fields: [("key", "other.txt")]))
        #expect(response.status == 403)
        #expect(response.errorText == "key doesn't match with scope")
        try await Self.expectNothingStored(harness)
    }

    @Test func emptyKeyIsASuppliedKey() async throws {
        // §1.3 [ambiguous]: "" is a supplied key, so a bucket:key scope refuses it, `bucket:` allows it.
        let harness = UpServerHarness()
        let refused = await Form.post(harness, Form.form(token: harness.token(scope: "demo:a"), fields: [("key", "")]))
        #expect(refused.status == 403)
        let allowed = await Form.post(harness, Form.form(token: harness.token(scope: "demo:"), fields: [("key", "")]))
        #expect(allowed.status == 200)
        #expect(allowed.json["key"] as? String == "")
    }

    @Test func fsizeLimitExceededMidStreamIs413() async throws {
        let harness = UpServerHarness()
        let token = harness.token { $0.fsizeLimit = 1024 * 1024 }
        let content = Form.pattern(count: 6 * 1024 * 1024)
        let response = await Form.post(harness, Form.form(token: token, fields: [("key", "big")], file: content))
        #expect(response.status == 413)
        #expect(await harness.index.object(bucket: "demo", key: "big") == nil)
        try await Self.expectNothingStored(harness)
    }

    @Test func fsizeMinIs403() async throws {
        let harness = UpServerHarness()
        let token = harness.token { $0.fsizeMin = 10 }
        let response = await Form.post(harness, Form.form(token: token))
        #expect(response.status == 403)
        try await Self.expectNothingStored(harness)
    }
}
