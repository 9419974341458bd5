@testable import BizServer
import Foundation
import Testing
import TestSupport

/// The webhook outbox payload is stored text: rows written by one version are read by the next,
/// so the encoding is checked against Foundation's `JSONEncoder` (which wrote every earlier row)
/// and the decoding against rows as earlier versions left them.
@Suite("WebhookMessage")
struct WebhookMessageTests {
    /// What earlier versions stored: `JSONEncoder` with sorted keys, slashes unescaped.
    private struct Legacy: Encodable {
        var endpoint: String
        var webhookID: String
        var type: String
        var body: String

        init(_ message: WebhookMessage) {
            endpoint = message.endpoint
            webhookID = message.webhookID
            type = message.type
            body = message.body
        }

        func encoded() throws -> String { try LegacyJSON.text(self) }
    }

    static let messages: [WebhookMessage] = [
        WebhookMessage(
            endpoint: "https://app.example/hooks?x=1&y=/z", webhookID: "01JEXAMPLE0000000000000000",
            type: "upload.completed",
            body: #"{"type":"upload.completed","timestamp":"2026-12-07T23:00:00.000Z","data":{"key":"a/b c.jpg"}}"#),
        WebhookMessage(
            endpoint: "http://h/", webhookID: "quote\" back\\slash tab\t nl\n nul\u{0} del\u{7F} é 漢 😀 \u{2028}",
            type: "webhook.test", body: ""),
        WebhookMessage(endpoint: "", webhookID: "", type: "", body: ""),
    ]

    @Test(arguments: messages.indices)
    func writesTheTextJSONEncoderWrote(index: Int) throws {
        let message = Self.messages[index]
        #expect(message.encoded() == (try Legacy(message).encoded()))
    }

    @Test(arguments: messages.indices)
    func readsWhatItWrites(index: Int) throws {
        let message = Self.messages[index]
        #expect(try WebhookMessage(payload: message.encoded()) == message)
    }

    @Test func readsRowsWrittenByEarlierVersionsWhateverTheirSpacingAndEscapes() throws {
        // Escaped slashes and \u escapes, another member order, spacing.
        let row = #"""
            { "webhookID": "id\u00e9", "type": "upload.completed",
              "endpoint": "https:\/\/a\/hook", "body": "{\"n\":1}" }
            """#
        #expect(try WebhookMessage(payload: row) == WebhookMessage(
            endpoint: "https://a/hook", webhookID: "idé", type: "upload.completed", body: #"{"n":1}"#))
    }

    @Test(arguments: [
        "", "not json", "[]", #"{"endpoint":"e","webhookID":"i","type":"t"}"#,
        #"{"endpoint":"e","webhookID":"i","type":"t","body":{}}"#,
        #"{"endpoint":1,"webhookID":"i","type":"t","body":""}"#,
    ])
    func refusesPayloadsThatHoldNoWebhook(payload: String) {
        #expect(throws: WebhookMessage.DamagedPayload.self) { try WebhookMessage(payload: payload) }
    }
}
