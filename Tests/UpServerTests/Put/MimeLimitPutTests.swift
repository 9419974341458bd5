import HTTPKit
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// Issue 10 item 1 on the single-request paths no SDK drives (`/put`, `/putb64`, §4.5):
/// `mimeLimit` is matched against the type detected from the content, never the declared one.
@Suite("mimeLimit on put and putb64")
struct MimeLimitPutTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(0..<64)
    static let text = Array(String(repeating: "plain text, not an image\n", count: 4).utf8)

    /// `POST /put…` or `/putb64…` of `content` declared as `declared`.
    static func put(
        _ harness: UpServerHarness, base64: Bool, key: String, _ content: [UInt8], declared: String, detectMime: Int
    ) async -> Response {
        let token = harness.token(scope: "demo:\(key)") { $0.mimeLimit = "image/*"; $0.detectMime = detectMime }
        let path = PutPath(isBase64Body: base64, fsize: Int64(content.count), key: key, mimeType: declared).path
        let body = base64 ? Array(URLSafeBase64.encode(content).utf8) : content
        return await harness.send(.post, path, headers: UpServerHarness.auth(token), body: body)
    }

    @Test(arguments: [false, true], [0, 1])
    func theDetectedTypeDecides(base64: Bool, detectMime: Int) async throws {
        let harness = UpServerHarness()
        let refused = await Self.put(harness, base64: base64, key: "t", Self.text, declared: "image/png", detectMime: detectMime)
        #expect(refused.status == 403)
        #expect(refused.errorText == "limited mimeType")
        #expect(await harness.index.object(bucket: "demo", key: "t") == nil)
        let accepted = await Self.put(harness, base64: base64, key: "p", Self.png, declared: "text/plain", detectMime: detectMime)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(await harness.index.object(bucket: "demo", key: "p")?.mimeType == (detectMime == 0 ? "text/plain" : "image/png"))
    }
}
