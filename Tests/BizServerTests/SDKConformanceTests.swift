import BizServer
import Foundation
import TestSupport
import Testing

/// Runs `Tests/Conformance/biz_server_sdk.py` with the official Qiniu Python SDK (`qiniu==7.18.0`,
/// installed by `scripts/pyenv` into `.build/pyenv`) against a live biz-server: the SDK re-signs
/// our tokens identically, and callbacks it signs (QBox and Qiniu, with a signed X-Qiniu-Date)
/// are accepted while tampered ones are refused.
@Suite("Official Python SDK conformance")
struct SDKConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var python: String? {
        let candidates: [String?] = [ProcessInfo.processInfo.environment["UPGATE_PYTHON"], root.appending(path: ".build/pyenv/bin/python3").path]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func theSDKVerifiesOurTokensAndSignsCallbacksWeAccept() async throws {
        guard let python = Self.python else {
            Issue.record("the SDK venv is missing: run scripts/pyenv (scripts/test does)")
            return
        }
        let live = try LiveServer()
        defer { Task { await live.stop() } }
        let script = Self.root.appending(path: "Tests/Conformance/biz_server_sdk.py").path
        let arguments = [script, "--base", "http://127.0.0.1:\(live.port)", "--ak", BizServerHarness.accessKey,
                         "--sk", BizServerHarness.secretKey, "--api-key", BizServerHarness.demoKey, "--key-prefix", "demo/"]
        let (status, output) = try await BlockingIO.run { try Self.run(python, arguments) }
        #expect(status == 0, "SDK conformance failed:\n\(output)")
        #expect(output.contains("0 failed"), "\(output)")
        #expect(!output.contains("FAIL "), "\(output)")
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
