import HTTPKit
import Testing
@testable import UpServer

/// up-server opens every upload route (form, put, v1, v2) and downloads to the configured web
/// origins (issue 13 §3), and nothing that takes the AK/SK (management, the outbox admin API).
@Suite("up-server CORS")
struct UpRoutesCORSTests {
    static let page = "http://127.0.0.1:8080"

    static func preflight(_ harness: UpServerHarness, _ path: String, method: String) async -> Response {
        await harness.send(.options, path, headers: [
            "Origin": page, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization,content-md5,content-type",
        ])
    }

    @Test(arguments: [
        ("/", "POST"), ("/mkblk/4194304", "POST"), ("/bput/ctx/0", "POST"), ("/mkfile/10", "POST"),
        ("/put/10", "POST"), ("/buckets/demo/objects/a2V5/uploads", "POST"),
        ("/buckets/demo/objects/a2V5/uploads/id/1", "PUT"), ("/buckets/demo/objects/a2V5/uploads/id", "DELETE"),
        ("/download/ZGVtbzprZXk=", "GET"),
    ])
    func everyUploadRouteAndDownloadsAnswerThePreflight(path: String, method: String) async {
        let harness = UpServerHarness { $0.cors = CORSPolicy(allowedOrigins: [Self.page]) }
        let response = await Self.preflight(harness, path, method: method)
        #expect(response.status == 204, "\(path)")
        #expect(response.headers["Access-Control-Allow-Origin"] == Self.page)
        #expect(response.headers["Access-Control-Allow-Methods"]?.contains(method) == true, "\(path)")
        #expect(response.headers["Access-Control-Allow-Headers"]?.contains("Content-MD5") == true)
    }

    @Test func managementAndOperationsStayClosed() async {
        let harness = UpServerHarness { $0.cors = CORSPolicy(allowedOrigins: [Self.page]) }
        for path in ["/stat/ZGVtbzprZXk=", "/admin/outbox", "/healthz"] {
            let response = await Self.preflight(harness, path, method: "GET")
            #expect(response.status == 405 && response.headers["Access-Control-Allow-Origin"] == nil, "\(path)")
        }
    }

    @Test func aFailedPartIsReadableTooWithItsReqid() async {
        let harness = UpServerHarness { $0.cors = CORSPolicy(allowedOrigins: [Self.page]) }
        let response = await harness.send(
            .put, "/buckets/demo/objects/a2V5/uploads/nope/1", headers: ["Origin": Self.page], body: [1, 2, 3])
        #expect(response.status == 401)
        #expect(response.headers["Access-Control-Allow-Origin"] == Self.page)
        #expect(response.headers["Access-Control-Expose-Headers"]?.contains("X-Reqid") == true)
    }
}
