import Basics
import HTTPKit
import UpCore
import Testing

@Suite("up-server operations")
struct UpOperationsControllerTests {
    @Test func healthzAndMetricsAnswer() async {
        let harness = UpServerHarness()
        let health = await harness.send(.get, "/healthz")
        #expect(health.status == 200)
        #expect(health.json["status"] as? String == "ok")
        let metrics = await harness.send(.get, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("# TYPE upgate_up_outbox_depth gauge"))
        #expect(metrics.text.contains("upgate_up_outbox_depth 0"))
    }
}

@Suite("up-server access log")
struct UpAccessLogTests {
    @Test func uploadRequestsLogTheTokensTraceIDAndBucket() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:a") { policy in
            policy.callbackUrl = "http://127.0.0.1:1/v1/callback"
            policy.callbackBody = "key=$(key)&clientId=demo&traceId=trace-0123456789"
        }
        _ = await harness.send(.post, "/mkblk/4", headers: UpServerHarness.auth(token), body: Array("abcd".utf8))
        let line = try #require(harness.logs.capturedLines.last { $0.contains("\"path\":\"/mkblk/4\"") })
        #expect(line.contains("\"trace\":\"trace-0123456789\""), "\(line)")
        #expect(line.contains("\"bucket\":\"demo\""), "\(line)")
        #expect(!line.contains(UpServerHarness.secretKey))
    }
}
