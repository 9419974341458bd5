import Foundation
import TestSupport
import Testing

/// biz-server's webhooks checked by the Standard Webhooks oracle (PyPI `standardwebhooks`,
/// `Tests/Conformance/biz_webhooks.py`) against the real `biz-server` process: exactly one verified
/// delivery per record id across a receiver answering 500 twice, a receiver down for a while, a
/// kill -9 of biz-server between the record and the delivery, and redelivered callbacks; the same
/// `webhook-id` on every attempt; secret rotation; 410, dead deliveries, re-queue, the test event.
@Suite("biz-server webhooks (standardwebhooks oracle)")
struct BizWebhookDeliveryTests {
    @Test func everyRecordIsDeliveredExactlyOnceAndVerifies() async throws {
        let root = PythonSDK.repositoryRoot
        let binary = root.appending(path: ".build/debug/biz-server").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build biz-server first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appending(path: "webhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try await PythonSDK.run([
            root.appending(path: "Tests/Conformance/biz_webhooks.py").path, "--binary", binary,
            "--workdir", directory.path,
        ])
        let log = (try? String(contentsOf: directory.appending(path: "biz-server.log"), encoding: .utf8)) ?? ""
        #expect(status == 0, "webhook test failed:\n\(output)\n--- biz-server log tail ---\n\(log.suffix(4000))")
        #expect(output.contains(" passed, 0 failed"), "\(output)")
    }
}
