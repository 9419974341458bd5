import Foundation
import TestSupport
import Testing

/// kill -9 of the real `up-server` process in the middle of an SDK upload, restart on the same
/// data directory, resume (`Tests/Conformance/up_server_crash.py`): acknowledged blocks survive,
/// the upload completes with the right etag, and no half-written object is ever served.
@Suite("up-server crash and resume")
struct UpServerCrashTests {
    @Test func anUploadSurvivesKillNineOfTheServer() async throws {
        let root = PythonSDK.repositoryRoot
        let binary = root.appending(path: ".build/debug/up-server").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build up-server first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appending(path: "crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try await PythonSDK.run([
            root.appending(path: "Tests/Conformance/up_server_crash.py").path, "--binary", binary,
            "--config", root.appending(path: "Config/up-server.json").path, "--workdir", directory.path,
        ])
        let serverLog = (try? String(contentsOf: directory.appending(path: "up-server.log"), encoding: .utf8)) ?? ""
        #expect(status == 0, "crash test failed:\n\(output)\n--- up-server log tail ---\n\(serverLog.suffix(3000))")
        #expect(output.contains(" passed, 0 failed"), "\(output)")
    }
}
