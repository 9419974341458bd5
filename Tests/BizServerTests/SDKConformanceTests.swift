import BizServer
import Foundation
import TestSupport
import Testing

/// Runs `Tests/Conformance/biz_server_sdk.py` with the official Qiniu Python SDK (`qiniu==7.18.0`,
/// installed by `scripts/pyenv` into `.build/pyenv`) against a live biz-server: the SDK re-signs
/// our tokens identically, and callbacks it signs (QBox and Qiniu, with a signed X-Qiniu-Date)
/// are accepted while tampered ones are refused; the policy it decodes is bounded by the declared
/// size (issue 10 item 6).
@Suite("Official Python SDK conformance")
struct SDKConformanceTests {
    static let root = PythonSDK.repositoryRoot

    @Test func theSDKVerifiesOurTokensAndSignsCallbacksWeAccept() async throws {
        let live = try LiveServer(clients: [
            .init(id: "demo", apiKeySHA256: BizServerConfiguration.apiKeyHash(BizServerHarness.demoKey), bucket: "demo",
                  keyPrefix: "demo/", vars: ["x:app": "sdk-conformance"])
        ])
        defer { Task { await live.stop() } }
        let script = Self.root.appending(path: "Tests/Conformance/biz_server_sdk.py").path
        let arguments = [script, "--base", "http://127.0.0.1:\(live.port)", "--ak", BizServerHarness.accessKey,
                         "--sk", BizServerHarness.secretKey, "--api-key", BizServerHarness.demoKey, "--key-prefix", "demo/",
                         "--server-var", "x:app"]
        let (status, output) = try await PythonSDK.run(arguments)
        #expect(status == 0, "SDK conformance failed:\n\(output)")
        #expect(output.contains("0 failed"), "\(output)")
        #expect(!output.contains("FAIL "), "\(output)")
    }
}
