import BizServer
import HTTPKit
import Testing

/// biz-server serves the upload page and upgate.js from its own origin, and lets the configured
/// web origins (`cors.allowedOrigins`) ask for tokens and use the admin API, nothing else.
@Suite("upload page, upgate.js and CORS")
struct WebPageControllerTests {
    static let app = "http://localhost:3000"

    @Test func thePageAndTheLibraryAreServedWithTheirTypes() async {
        let harness = BizServerHarness()
        let page = await harness.send(.get, "/")
        #expect(page.status == 200 && page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(page.text.contains(#"<input id="auth""#) && page.text.contains(#"type="file" multiple"#))
        #expect(page.text.contains(#"from "/upgate.js""#))
        let library = await harness.send(.get, "/upgate.js")
        #expect(library.status == 200 && library.headers["Content-Type"] == "text/javascript; charset=utf-8")
        for name in ["export class Uploader", "export class UploadTask", "tokenURL", "concurrency", "partSize"] {
            #expect(library.text.contains(name), "\(name)")
        }
    }

    @Test(arguments: ["/v1/uptoken", "/v1/admin/keys", "/v1/admin/keys/abc"])
    func tokenAndAdminPreflightsAreAnswered(path: String) async {
        let harness = BizServerHarness(cors: CORSPolicy(allowedOrigins: [Self.app]))
        let response = await harness.send(
            .options, path, headers: ["Origin": Self.app, "Access-Control-Request-Method": "POST"])
        #expect(response.status == 204)
        #expect(response.headers["Access-Control-Allow-Origin"] == Self.app)
        #expect(response.headers["Access-Control-Allow-Headers"]?.contains("Authorization") == true)
        #expect(response.headers["Vary"] == "Origin")
    }

    @Test func aTokenAnswerIsReadableFromTheAllowedOriginOnly() async {
        let harness = BizServerHarness(cors: CORSPolicy(allowedOrigins: [Self.app]))
        let headers: HTTPHeaders = [
            "Authorization": "Bearer \(BizServerHarness.demoKey)", "Content-Type": "application/json", "Origin": Self.app,
        ]
        let allowed = await harness.send(.post, "/v1/uptoken", headers: headers, body: Array("{}".utf8))
        #expect(allowed.status == 200 && allowed.headers["Access-Control-Allow-Origin"] == Self.app)
        var other = headers
        other.set(name: "Origin", value: "http://evil.example")
        let refused = await harness.send(.post, "/v1/uptoken", headers: other, body: Array("{}".utf8))
        #expect(refused.headers["Access-Control-Allow-Origin"] == nil && refused.headers["Vary"] == "Origin")
    }

    @Test func theCallbackAndTheRecordsAreNotOpenedToOtherOrigins() async {
        let harness = BizServerHarness(cors: CORSPolicy(allowedOrigins: [Self.app]))
        for path in ["/v1/callback", "/v1/uploads"] {
            let response = await harness.send(
                .options, path, headers: ["Origin": Self.app, "Access-Control-Request-Method": "POST"])
            #expect(response.status == 405 && response.headers["Access-Control-Allow-Origin"] == nil, "\(path)")
        }
    }
}
