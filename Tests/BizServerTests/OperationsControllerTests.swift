import Basics
import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore

@Suite("Operations and routing")
struct OperationsControllerTests {
    @Test func healthzAnswersOK() async throws {
        let harness = BizServerHarness()
        let response = await harness.send(.get, "/healthz")
        #expect(response.status == 200)
        #expect(try response.jsonObject()["status"] as? String == "ok")
    }

    @Test func metricsExposeTheDocumentedFamilies() async throws {
        let harness = BizServerHarness()
        _ = await harness.token("{}")
        _ = await harness.token("{}", apiKey: "nope")
        let response = await harness.send(.get, "/metrics")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"]?.hasPrefix("text/plain") == true)
        let text = response.text
        for line in [
            "upgate_biz_tokens_issued_total{client=\"demo\"} 1", "upgate_biz_tokens_refused_total{reason=\"bad_api_key\"} 1",
            "# TYPE upgate_biz_callbacks_accepted_total counter", "# TYPE upgate_biz_callbacks_duplicate_total counter",
            "# TYPE upgate_biz_callbacks_rejected_total counter", "upgate_biz_store_errors_total 0",
            "# TYPE upgate_biz_http_request_duration_seconds histogram",
        ] {
            #expect(text.contains(line), "metrics lack \(line)")
        }
    }

    @Test func unknownRoutesAndMethodsAreJSONErrors() async throws {
        let harness = BizServerHarness()
        let missing = await harness.send(.get, "/nope")
        #expect(missing.status == 404)
        #expect(missing.errorText != nil)
        let wrongMethod = await harness.send(.get, "/v1/uptoken")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"]?.contains("POST") == true)
        #expect(wrongMethod.errorText != nil)
    }
}
