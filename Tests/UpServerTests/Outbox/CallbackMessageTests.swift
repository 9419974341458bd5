import Foundation
import Testing
import TestSupport

@testable import UpServer

/// The outbox payload is stored text: rows written by one version are read by the next, so the
/// encoding is checked against Foundation's `JSONEncoder` (which wrote every earlier row) and the
/// decoding against rows as earlier versions left them.
@Suite("CallbackMessage")
struct CallbackMessageTests {
    /// What earlier versions stored: `JSONEncoder` with sorted keys, slashes unescaped.
    private struct Legacy: Encodable {
        struct Request: Encodable {
            var urls: [String]
            var host: String?
            var body: String
            var contentType: String
            var authScheme: String
        }
        var bucket: String
        var key: String
        var etag: String
        var request: Request

        init(_ message: CallbackMessage) {
            let r = message.request
            bucket = message.bucket
            key = message.key
            etag = message.etag
            request = Request(urls: r.urls, host: r.host, body: r.body, contentType: r.contentType, authScheme: r.authScheme)
        }

        func encoded() throws -> String { try LegacyJSON.text(self) }
    }

    static let messages: [CallbackMessage] = [
        CallbackMessage(
            bucket: "photos", key: "a/b c.jpg", etag: "Fto5o-5ea0sNMlW_75VgGJCv2AcJ",
            request: CallbackRequest(
                urls: ["http://127.0.0.1:8080/v1/callback", "https://biz.example/cb?x=1&y=/z"], host: "biz.local",
                body: "key=a%2Fb&hash=Fto5o&fsize=3", contentType: "application/x-www-form-urlencoded",
                authScheme: "qbox:dev-access-key")),
        CallbackMessage(
            bucket: "b", key: "quote\" back\\slash tab\t nl\n nul\u{0} del\u{7F} é 漢 😀 \u{2028}", etag: "",
            request: CallbackRequest(
                urls: ["http://h/"], host: nil, body: "{\"key\":\"$(key)\",\"n\":1}", contentType: "application/json",
                authScheme: "Qiniu")),
        CallbackMessage(
            bucket: "", key: "", etag: "e", request: CallbackRequest(urls: [], host: "", body: "", contentType: "", authScheme: "")),
    ]

    @Test(arguments: messages.indices)
    func writesTheTextJSONEncoderWrote(index: Int) throws {
        let message = Self.messages[index]
        #expect(message.encoded() == (try Legacy(message).encoded()))
    }

    @Test(arguments: messages.indices)
    func readsWhatItWrites(index: Int) throws {
        let message = Self.messages[index]
        #expect(try CallbackMessage(payload: message.encoded()) == message)
    }

    @Test func readsRowsWrittenByEarlierVersionsWhateverTheirSpacingAndEscapes() throws {
        // Escaped slashes and \u escapes, another member order, spacing, an explicit null host.
        let row = #"""
            { "request": {"urls": ["http:\/\/a\/cb"], "host": null, "body": "k=\u00e9", "contentType": "x",
              "authScheme": "qbox"}, "key": "k", "etag": "E", "bucket": "b" }
            """#
        let message = try CallbackMessage(payload: row)
        #expect(message == CallbackMessage(
            bucket: "b", key: "k", etag: "E",
            request: CallbackRequest(urls: ["http://a/cb"], host: nil, body: "k=é", contentType: "x", authScheme: "qbox")))
    }

    @Test(arguments: [
        "", "not json", "[]", #"{"bucket":"b","key":"k","etag":"e"}"#,
        #"{"bucket":"b","key":"k","etag":"e","request":{"urls":"http://a","body":"","contentType":"","authScheme":""}}"#,
        #"{"bucket":"b","key":"k","etag":"e","request":{"urls":[1],"body":"","contentType":"","authScheme":""}}"#,
        #"{"bucket":"b","key":"k","etag":"e","request":{"urls":[],"host":7,"body":"","contentType":"","authScheme":""}}"#,
        #"{"bucket":1,"key":"k","etag":"e","request":{"urls":[],"body":"","contentType":"","authScheme":""}}"#,
    ])
    func refusesPayloadsThatHoldNoCallback(payload: String) {
        #expect(throws: CallbackMessage.DamagedPayload.self) { try CallbackMessage(payload: payload) }
    }
}
