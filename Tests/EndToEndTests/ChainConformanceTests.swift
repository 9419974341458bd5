import Basics
import BizServer
import Foundation
import TestSupport
import Testing
import UpServer

/// The whole chain on loopback, driven by the official Qiniu Python SDK, unchanged
/// (`Tests/Conformance/up_server_sdk.py`): form, v1 and v2 uploads with and without keys, saveKey,
/// x: variables and metadata, a callback the SDK's `verify_callback` accepts, a token from
/// biz-server whose callback record comes back to the uploader, and a resume from the SDK's own
/// record after the SDK process was killed.
@Suite("Chain conformance with the official Python SDK")
struct ChainConformanceTests {
    @Test func theOfficialSDKUploadsThroughUpServerAndBizServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logs = LogSink.memory()

        let up = try UpServer.open(
            configuration: UpServerConfiguration(
                port: 0, dataDirectory: directory.appending(path: "up").path,
                keys: ["dev-access-key": "dev-secret-key"], buckets: ["demo"], threads: 2),
            logger: Logger(label: "up-server", sink: logs))
        let upPort = try up.start()
        let bizDirectory = directory.appending(path: "biz")
        try FileManager.default.createDirectory(at: bizDirectory, withIntermediateDirectories: true)
        let biz = BizServer(
            configuration: BizServerConfiguration(
                port: 0, dataDirectory: bizDirectory.path, accessKey: "dev-access-key", secretKey: "dev-secret-key",
                upHosts: ["http://127.0.0.1:\(upPort)"],
                clients: [.init(id: "demo", apiKeySHA256: BizServerConfiguration.apiKeyHash("dev-api-key"), bucket: "demo",
                                keyPrefix: "demo/")],
                threads: 2),
            store: try SQLiteUploadRecordStore(path: bizDirectory.appending(path: "uploads.sqlite3").path, durableWrites: true),
            logger: Logger(label: "biz-server", sink: logs))
        let bizPort = try biz.start()

        let script = PythonSDK.repositoryRoot.appending(path: "Tests/Conformance/up_server_sdk.py").path
        let result = await Result {
            try await PythonSDK.run([
                script, "--up", "http://127.0.0.1:\(upPort)", "--biz", "http://127.0.0.1:\(bizPort)",
                "--ak", "dev-access-key", "--sk", "dev-secret-key", "--bucket", "demo", "--api-key", "dev-api-key",
                "--workdir", directory.path,
            ])
        }
        await up.shutdown()
        await biz.shutdown()
        let (status, output) = try result.get()
        #expect(status == 0, "SDK conformance failed:\n\(output)")
        #expect(output.contains(" passed, 0 failed"), "\(output)")
        // Secrets never reach the logs of a full run.
        let log = logs.capturedLines.joined()
        for secret in ["dev-secret-key", "dev-api-key"] { #expect(!log.contains(secret), "logs leak \(secret)") }
    }
}

extension Result where Failure == any Error {
    /// Captures the outcome of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
