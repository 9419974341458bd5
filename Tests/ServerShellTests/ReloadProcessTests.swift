import Foundation
import NativeCrypto
import TestSupport
import Testing
import UpCore

#if canImport(Glibc)
import Glibc
#endif

/// `kill -HUP` (issue 10, item 9): biz-server reloads its clients and keys, up-server its keys
/// and buckets; what changed is logged (never a secret); a reload that fails keeps the running
/// configuration and says why; the process keeps serving throughout.
@Suite("SIGHUP reloads the configuration", .serialized)
struct ReloadProcessTests {
    static func request(
        _ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> TestHTTPResponse {
        try await BlockingIO.run { try TestHTTPClient.request(port: port, method, target, headers: headers, body: body) }
    }

    static func token(_ port: Int, apiKey: String) async throws -> Int {
        try await request(
            port, "POST", "/v1/uptoken", headers: [("Authorization", "Bearer \(apiKey)")],
            body: Array(#"{"key":"demo/a.bin"}"#.utf8)
        ).status
    }

    @Test func bizServerReloadsItsClientsAndKeepsTheOldOnesWhenTheNewFileIsBad() async throws {
        let server = ServerFixture("biz-server")
        defer { server.remove() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let process = try server.start(["--config", path])
        defer { Task { await process.stop() } }
        let port = try #require(await process.waitUntilListening(), "\(process.standardError)")
        #expect(try await Self.token(port, apiKey: "test-api-key") == 200)
        #expect(try await Self.token(port, apiKey: "ops-api-key") == 401)

        let opsHash = Hex.encode(SHA256.hash(Array("ops-api-key".utf8)))
        let added = server.validConfiguration.replacingOccurrences(
            of: #""keyPrefix": "demo/"}]"#,
            with: #""keyPrefix": "demo/"}, {"id": "ops", "apiKeySHA256": "\#(opsHash)", "bucket": "demo", "keyPrefix": "demo/"}]"#)
        try server.writeConfiguration(added.replacingOccurrences(of: "test-sk", with: "rotated-sk"))
        process.send(SIGHUP)
        let reloaded = try #require(await process.waitForLog("configuration reloaded"), "\(process.standardError)")
        #expect(reloaded["clientsAdded"]?.stringValue == "ops")
        #expect(reloaded["clientsRemoved"]?.stringValue == "")
        #expect(reloaded["secretKey"]?.stringValue == "changed")
        #expect(!process.standardError.contains("rotated-sk"), "a secret was logged")
        #expect(try await Self.token(port, apiKey: "ops-api-key") == 200)

        try server.writeConfiguration(added.replacingOccurrences(of: #""port": 0"#, with: #""prot": 0"#))
        process.send(SIGHUP)
        let failed = try #require(await process.waitForLog("configuration reload failed"), "\(process.standardError)")
        #expect(failed["error"]?.stringValue == #"unknown key "prot" in \#(path) (did you mean "port"?)"#)
        #expect(try await Self.token(port, apiKey: "ops-api-key") == 200)
        #expect(try await Self.token(port, apiKey: "test-api-key") == 200)
        #expect(process.process.isRunning)
        process.send(SIGTERM)
        #expect(await process.exitStatus() == 0, "\(process.standardError)")
    }

    /// `mkblk` of a 4-byte block with a token signed by `accessKey` for `bucket`.
    static func mkblk(_ port: Int, accessKey: String, secretKey: String, bucket: String) async throws -> Int {
        let policy = PutPolicy(scope: bucket, deadline: Int64(Date().timeIntervalSince1970) + 600)
        let token = UpToken.sign(policy, accessKey: accessKey, mac: HMACSHA1(key: Array(secretKey.utf8)))
        return try await request(
            port, "POST", "/mkblk/4", headers: [("Authorization", "UpToken \(token)")], body: Array("abcd".utf8)
        ).status
    }

    @Test func upServerReloadsItsKeysAndBuckets() async throws {
        let server = ServerFixture("up-server")
        defer { server.remove() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let process = try server.start(["--config", path])
        defer { Task { await process.stop() } }
        let port = try #require(await process.waitUntilListening(), "\(process.standardError)")
        #expect(try await Self.mkblk(port, accessKey: "test-ak", secretKey: "test-sk", bucket: "demo") == 200)
        #expect(try await Self.mkblk(port, accessKey: "test-ak", secretKey: "test-sk", bucket: "photos") == 631)
        #expect(try await Self.mkblk(port, accessKey: "ops-ak", secretKey: "ops-sk", bucket: "demo") == 401)

        let changed = server.validConfiguration
            .replacingOccurrences(of: #""buckets": ["demo"]"#, with: #""buckets": ["demo", "photos"]"#)
            .replacingOccurrences(
                of: #"[{"accessKey": "test-ak", "secretKey": "test-sk"}]"#,
                with: #"[{"accessKey": "ops-ak", "secretKey": "ops-sk"}]"#)
        try server.writeConfiguration(changed)
        process.send(SIGHUP)
        let reloaded = try #require(await process.waitForLog("configuration reloaded"), "\(process.standardError)")
        #expect(reloaded["keysAdded"]?.stringValue == "ops-ak")
        #expect(reloaded["keysRemoved"]?.stringValue == "test-ak")
        #expect(reloaded["bucketsAdded"]?.stringValue == "photos")
        #expect(!process.standardError.contains("ops-sk"), "a secret was logged")
        #expect(try await Self.mkblk(port, accessKey: "ops-ak", secretKey: "ops-sk", bucket: "photos") == 200)
        #expect(try await Self.mkblk(port, accessKey: "test-ak", secretKey: "test-sk", bucket: "demo") == 401)

        try server.writeConfiguration(changed.replacingOccurrences(of: #""buckets": ["demo", "photos"]"#, with: #""buckets": []"#))
        process.send(SIGHUP)
        let failed = try #require(await process.waitForLog("configuration reload failed"), "\(process.standardError)")
        #expect(failed["error"]?.stringValue?.contains("buckets") == true, "\(process.standardError)")
        #expect(try await Self.mkblk(port, accessKey: "ops-ak", secretKey: "ops-sk", bucket: "photos") == 200)
        process.send(SIGTERM)
        #expect(await process.exitStatus() == 0, "\(process.standardError)")
    }
}
