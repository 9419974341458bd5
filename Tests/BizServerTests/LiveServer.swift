import Basics
import BizServer
import Foundation
import TestSupport

/// A real biz-server on `127.0.0.1:0` over a SQLite store in a temporary directory.
final class LiveServer: Sendable {
    let server: BizServer
    let port: Int
    let directory: URL
    let logs = LogSink.memory()

    let keys: SQLiteAPIKeyStore

    init(
        clients: [BizServerConfiguration.Client]? = nil, jwt: JWTConfiguration? = nil,
        access: BizServerConfiguration.Access = .init()
    ) throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "biz-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = BizServerConfiguration(
            port: 0, dataDirectory: directory.path, accessKey: BizServerHarness.accessKey,
            secretKey: BizServerHarness.secretKey,
            clients: clients ?? [
                .init(id: "demo", apiKeySHA256: BizServerConfiguration.apiKeyHash(BizServerHarness.demoKey), bucket: "demo",
                      keyPrefix: "demo/")
            ],
            rateLimit: .init(tokensPerSecond: 1000, burst: 1000), threads: 2)
        configuration.jwt = jwt
        configuration.access = access
        keys = try SQLiteAPIKeyStore(directory: directory.path)
        let store = try SQLiteUploadRecordStore(
            path: directory.appending(path: "uploads.sqlite3").path, durableWrites: true)
        server = BizServer(
            configuration: configuration, store: store, keys: keys, logger: Logger(label: "live", sink: logs))
        port = try server.start()
    }

    /// One request on a fresh connection, off the cooperative pool.
    func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> TestHTTPResponse {
        let port = self.port
        return try await BlockingIO.run {
            try TestHTTPClient.request(port: port, method, target, headers: headers, body: body)
        }
    }

    func stop() async {
        await server.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
