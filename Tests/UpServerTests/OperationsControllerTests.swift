import HTTPKit
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
