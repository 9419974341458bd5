import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// `POST /` (qiniu-protocol.md §6) through the router, over the in-memory harness.
@Suite("form upload")
struct FormUploadControllerTests {
    static let hello = Array("hello".utf8)
    static let helloEtag = "Fqr0xh3cxeii2r7eDztILNmuqUNN"

    /// A form with `token` first, then `fields`, then the file — the order every SDK uses.
    static func form(
        token: String?, fields: [(String, String)] = [], file: [UInt8]? = hello, filename: String? = "h.txt",
        contentType: String? = "application/octet-stream"
    ) -> MultipartBody {
        var form = MultipartBody()
        if let token { form.field("token", token) }
        for (name, value) in fields { form.field(name, value) }
        if let file { form.file(file, filename: filename, contentType: contentType) }
        return form
    }

    static func post(_ harness: UpServerHarness, _ form: MultipartBody) async -> Response {
        await harness.send(.post, "/", headers: form.headers, body: form.body)
    }

    /// The §10.4 9 MiB pattern `((i*31) + (i>>12)) & 0xff`.
    static func pattern(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ ($0 >> 12)) }
    }

    // MARK: Success

    @Test func observedPythonRequestStoresTheObject() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:hello.txt")
        let form = Self.form(
            token: token, fields: [("key", "hello.txt"), ("crc32", "907060870"), ("x:a", "A"), ("x-qn-meta-color", "red")],
            contentType: "text/plain")
        let response = await Self.post(harness, form)
        #expect(response.status == 200)
        #expect(response.text == #"{"hash":"Fqr0xh3cxeii2r7eDztILNmuqUNN","key":"hello.txt"}"#)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["Cache-Control"] == "no-store")
        let object = try #require(await harness.index.object(bucket: "demo", key: "hello.txt"))
        #expect(object.etag == Self.helloEtag)
        #expect(object.fsize == 5)
        #expect(object.mimeType == "text/plain")
        #expect(object.metadata == ["x-qn-meta-color": "red"])
        #expect(object.segments.count == 1)
        let blob = try #require(object.segments.first?.blob)
        #expect(try harness.store.read(blob, range: 0..<5) == Self.hello)
        #expect(harness.store.syncCount(of: blob) >= 1)
    }

    @Test func emptyFileWithoutCRCHasTheEmptyEtag() async throws {
        let harness = UpServerHarness()
        let response = await Self.post(harness, Self.form(token: harness.token(), file: []))
        #expect(response.status == 200)
        #expect(response.json["hash"] as? String == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
        #expect(response.json["key"] as? String == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
        let object = try #require(await harness.index.object(bucket: "demo", key: "Fto5o-5ea0sNMlW_75VgGJCv2AcJ"))
        #expect(object.fsize == 0)
        #expect(object.segments.isEmpty)
    }

    @Test func nineMebibytesAreStoredAsThreeBlockBlobs() async throws {
        let harness = UpServerHarness()
        let content = Self.pattern(count: 9 * 1024 * 1024)
        let response = await Self.post(
            harness, Self.form(token: harness.token(), fields: [("key", "big.bin"), ("crc32", String(CRC32.checksum(content)))], file: content))
        #expect(response.status == 200)
        #expect(response.json["hash"] as? String == "litJxRiN_qpEphigieYPgiWEx2e9")
        let object = try #require(await harness.index.object(bucket: "demo", key: "big.bin"))
        #expect(object.segments.map(\.length) == [4_194_304, 4_194_304, 1_048_576])
        var stored: [UInt8] = []
        for segment in object.segments {
            stored += try harness.store.read(segment.blob, range: 0..<segment.length)
            #expect(harness.store.syncCount(of: segment.blob) >= 1)
        }
        #expect(stored == content)
        #expect(try harness.store.list().count == 3)
    }

    @Test func saveKeyRendersEtagAndExtension() async throws {
        let harness = UpServerHarness()
        let token = harness.token { $0.saveKey = "$(etag)$(ext)" }
        let response = await Self.post(harness, Self.form(token: token, filename: "a.jpg"))
        #expect(response.status == 200)
        #expect(response.json["key"] as? String == Self.helloEtag + ".jpg")
        #expect(await harness.index.object(bucket: "demo", key: Self.helloEtag + ".jpg") != nil)
    }

    @Test func fnameFieldOverridesThePartFilename() async throws {
        let harness = UpServerHarness()
        let token = harness.token { $0.saveKey = "$(fname)" }
        let response = await Self.post(harness, Self.form(token: token, fields: [("fname", "b.png")], filename: "a.jpg"))
        #expect(response.json["key"] as? String == "b.png")
    }

    @Test func withoutKeyOrSaveKeyTheKeyIsTheEtag() async {
        let harness = UpServerHarness()
        let response = await Self.post(harness, Self.form(token: harness.token()))
        #expect(response.status == 200)
        #expect(response.json["key"] as? String == Self.helloEtag)
    }

    @Test func bucketScopeIsInsertOnlyButSameContentSucceeds() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let first = await Self.post(harness, Self.form(token: token, fields: [("key", "k")]))
        let again = await Self.post(harness, Self.form(token: token, fields: [("key", "k")]))
        #expect(first.status == 200)
        #expect(again.status == 200)
        #expect(again.text == first.text)
        // The duplicate's blob was not kept: only the first upload's blob remains.
        #expect(try harness.store.list().count == 1)
        let other = await Self.post(harness, Self.form(token: token, fields: [("key", "k")], file: Array("other".utf8)))
        #expect(other.status == 614)
        #expect(other.errorText == "file exists")
        #expect(try harness.store.list().count == 1)
        #expect(await harness.index.object(bucket: "demo", key: "k")?.etag == Self.helloEtag)
    }

    @Test func returnBodyRendersMagicAndCustomVariables() async {
        let harness = UpServerHarness()
        let token = harness.token {
            $0.returnBody = #"{"key":"$(key)","a":"$(x:a)","size":$(fsize),"name":$(fname),"mime":"$(mimeType)"}"#
        }
        let response = await Self.post(
            harness, Self.form(token: token, fields: [("key", "r.txt"), ("x:a", "A\"b")], contentType: "text/plain"))
        #expect(response.status == 200)
        #expect(response.text == #"{"key":"r.txt","a":"A\"b","size":5,"name":"h.txt","mime":"text/plain"}"#)
    }

    @Test(arguments: ["http://biz.example/done", "http://biz.example/done?x=1", "http://biz.example/done#top"])
    func returnUrlRedirectsWithTheEncodedReply(_ returnUrl: String) async throws {
        let harness = UpServerHarness()
        let token = harness.token { $0.returnUrl = returnUrl }
        let response = await Self.post(harness, Self.form(token: token, fields: [("key", "r.txt")]))
        #expect(response.status == 303)
        let location = try #require(response.headers["Location"])
        let base = returnUrl.split(separator: "#").first.map(String.init) ?? returnUrl
        #expect(location.hasPrefix(base + (base.contains("?") ? "&" : "?") + "upload_ret="))
        #expect(location.hasSuffix("#top") == returnUrl.hasSuffix("#top"))
        var encoded = Substring(location[location.range(of: "upload_ret=")!.upperBound...])
        if let hash = encoded.firstIndex(of: "#") { encoded = encoded[..<hash] }
        let reply = try #require(URLSafeBase64.decode(encoded))
        #expect(String(decoding: reply, as: UTF8.self) == #"{"hash":"Fqr0xh3cxeii2r7eDztILNmuqUNN","key":"r.txt"}"#)
    }

    @Test func acceptFieldSetsTheResponseContentType() async {
        let harness = UpServerHarness()
        let response = await Self.post(harness, Self.form(token: harness.token(), fields: [("accept", "text/plain")]))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/plain")
        #expect(response.json["hash"] as? String == Self.helloEtag)
    }

    @Test func deliveredCallbackReplyIsRelayed() async throws {
        let harness = UpServerHarness()
        harness.callbacks.script(.delivered(reply: Array(#"{"biz":"ok"}"#.utf8)))
        let token = harness.token {
            $0.callbackUrl = "http://biz.example/cb"
            $0.callbackBody = "key=$(key)&a=$(x:a)"
            $0.returnUrl = "http://ignored.example/"  // a callback wins over returnUrl
        }
        let response = await Self.post(harness, Self.form(token: token, fields: [("key", "c.txt"), ("x:a", "A")]))
        #expect(response.status == 200)
        #expect(response.text == #"{"biz":"ok"}"#)
        #expect(harness.callbacks.sent.first?.body == "key=c.txt&a=A")
    }

    @Test func failedCallbackIs579AndTheObjectStays() async throws {
        let harness = UpServerHarness()
        harness.callbacks.script(.failed(reason: "callback returned 500"))
        let token = harness.token { $0.callbackUrl = "http://biz.example/cb" }
        let response = await Self.post(harness, Self.form(token: token, fields: [("key", "f.txt")]))
        #expect(response.status == 579)
        #expect(response.errorText == "callback returned 500")
        let object = try #require(await harness.index.object(bucket: "demo", key: "f.txt"))
        #expect(try harness.store.read(object.segments[0].blob, range: 0..<5) == Self.hello)
    }

    @Test func fieldsAfterTheFileStillCount() async throws {
        let harness = UpServerHarness()
        var form = MultipartBody()
        form.field("token", harness.token())
        form.file(Self.hello)
        form.field("key", "late.txt")
        let response = await Self.post(harness, form)
        #expect(response.status == 200)
        #expect(response.json["key"] as? String == "late.txt")
    }
}
