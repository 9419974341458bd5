import Basics
import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing

/// `biz-server keys …` as a separate process (the built binary) writing to the store of a
/// running biz-server: what an operator does, and what the server must notice without a restart.
@Suite("biz-server keys, against a running server's store")
struct KeysCommandProcessTests {
    /// The running server and a configuration file for the command naming its data directory.
    final class Fixture: Sendable {
        let live: LiveServer
        let config: String

        init() throws {
            live = try LiveServer()
            config = live.directory.appending(path: "biz-server.json").path
            let json = """
                {"accessKey": "\(BizServerHarness.accessKey)", "secretKey": "\(BizServerHarness.secretKey)",
                 "dataDirectory": "\(live.directory.path)",
                 "clients": [{"id": "demo", "bucket": "demo", "keyPrefix": "demo/",
                              "apiKeySHA256": "\(BizServerConfiguration.apiKeyHash(BizServerHarness.demoKey))"}]}
                """
            try json.write(toFile: config, atomically: true, encoding: .utf8)
        }

        /// Runs `biz-server keys <arguments> --config <the file>` to its end.
        func keys(_ arguments: [String], withConfig: Bool = true) async throws -> (status: Int32, stdout: String, stderr: String) {
            let binary = PythonSDK.repositoryRoot.appending(path: ".build/debug/biz-server").path
            try #require(FileManager.default.isExecutableFile(atPath: binary), "build biz-server first (swift build)")
            let directory = live.directory
            let all = ["keys"] + arguments + (withConfig ? ["--config", config] : [])
            return try await BlockingIO.run {
                let out = directory.appending(path: "keys-\(UUID().uuidString).out")
                let err = directory.appending(path: "keys-\(UUID().uuidString).err")
                _ = FileManager.default.createFile(atPath: out.path, contents: nil)
                _ = FileManager.default.createFile(atPath: err.path, contents: nil)
                let process = Process()
                process.executableURL = URL(fileURLWithPath: binary)
                process.arguments = all
                process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("UPGATE_") }
                process.standardOutput = try FileHandle(forWritingTo: out)
                process.standardError = try FileHandle(forWritingTo: err)
                try process.run()
                process.waitUntilExit()
                return (process.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
            }
        }

        /// `POST /v1/uptoken` over TCP with `key`; the status.
        func token(_ key: String) async throws -> Int {
            try await live.request("POST", "/v1/uptoken", headers: [("Authorization", "Bearer \(key)")], body: Array("{}".utf8)).status
        }

        /// Requests a token with `key` every 20 ms until the status is `status`; how long that took
        /// (nil: not within 2 s).
        func untilToken(_ key: String, is status: Int) async throws -> Duration? {
            let started = ContinuousClock.now
            while ContinuousClock.now - started < .seconds(2) {
                if try await token(key) == status { return ContinuousClock.now - started }
                try await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }

        func stop() async { await live.stop() }
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test func aCreatedKeyWorksAndARevokedOneIs401WithinASecond() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        try await fixture.live.server.refreshKeys()
        let created = try await fixture.keys(["create", "--client", "demo", "--name", "ci", "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let object = try #require(try Self.json(created.stdout) as? [String: Any])
        #expect(Set(object.keys) == ["id", "key", "client", "name", "createdAt", "expiresAt"])
        let key = try #require(object["key"] as? String)
        let id = try #require(object["id"] as? String)
        #expect(key.wholeMatch(of: /upk_[0-9a-f]{48}/) != nil)
        #expect(id.wholeMatch(of: /key_[0-9a-f]{24}/) != nil)
        #expect(object["client"] as? String == "demo" && object["name"] as? String == "ci")
        #expect(object["expiresAt"] is NSNull)

        let works = try #require(try await fixture.untilToken(key, is: 200), "the created key never worked")
        #expect(works < .seconds(1), "the created key took \(works)")

        let revoked = try await fixture.keys(["revoke", id, "--json"])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        let info = try #require(try Self.json(revoked.stdout) as? [String: Any])
        #expect(info["id"] as? String == id && info["state"] as? String == "revoked" && info["key"] == nil)
        let refused = try #require(try await fixture.untilToken(key, is: 401), "the revoked key kept working")
        #expect(refused < .seconds(1), "the revoked key worked for \(refused)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await fixture.token(key) == 401)
        #expect(try await fixture.token(BizServerHarness.demoKey) == 200)  // the configured key is untouched
    }

    @Test func aKeyExpiresOnTime() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let created = try await fixture.keys(["create", "--client", "demo", "--expires", "2s", "--json"])
        let object = try #require(try Self.json(created.stdout) as? [String: Any])
        let key = try #require(object["key"] as? String)
        let createdAt = try #require(object["createdAt"] as? Int64)
        #expect(object["expiresAt"] as? Int64 == createdAt + 2)
        _ = try #require(try await fixture.untilToken(key, is: 200))
        let expired = try #require(try await fixture.untilToken(key, is: 401))
        #expect(expired < .seconds(3))
        let listed = try await fixture.keys(["list", "--json"])
        let items = try #require(try Self.json(listed.stdout) as? [[String: Any]])
        #expect(items.last?["state"] as? String == "expired")
    }

    @Test func theListShowsEveryKeyWithoutASecret() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        var keys: [String] = []
        for arguments in [["--name", "old"], ["--name", "new", "--expires", "90d"]] {
            let created = try await fixture.keys(["create", "--client", "demo", "--json"] + arguments)
            keys.append(try #require((try Self.json(created.stdout) as? [String: Any])?["key"] as? String))
        }
        let listed = try await fixture.keys(["list", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let items = try #require(try Self.json(listed.stdout) as? [[String: Any]])
        #expect(items.map { $0["name"] as? String } == ["", "old", "new"])
        #expect(items[0]["id"] as? String == "config:demo" && items[0]["readOnly"] as? Bool == true)
        #expect(items.dropFirst().allSatisfy { $0["source"] as? String == "store" && $0["state"] as? String == "active" })
        let text = try await fixture.keys(["list"])
        for output in [listed.stdout, text.stdout] {
            for key in keys + [BizServerHarness.demoKey] {
                #expect(!output.contains(key) && !output.contains(BizServerConfiguration.apiKeyHash(key)))
            }
            #expect(!output.contains("upk_"))
        }
        #expect(text.stdout.split(separator: "\n").count == 4)
        #expect(text.stdout.contains("configuration (read-only)"))
        // What the admin API lists is what the command lists.
        let filtered = try await fixture.keys(["list", "--client", "nobody", "--json"])
        #expect(filtered.stdout == "[]\n")
    }

    @Test func theTextOutputPrintsTheKeyOnALineOfItsOwnOnce() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let created = try await fixture.keys(["create", "--client", "demo", "--expires", "12h"])
        #expect(created.status == 0)
        let lines = created.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        let key = String(lines[1])
        #expect(key.wholeMatch(of: /upk_[0-9a-f]{48}/) != nil)
        #expect(lines[0].hasPrefix("created key_") && lines[0].contains("client demo") && lines[0].contains("expires 20"))
        _ = try #require(try await fixture.untilToken(key, is: 200))
    }

    @Test func mistakesHaveTheirExitStatusAndOneLine() async throws {
        let fixture = try Fixture()
        defer { Task { await fixture.stop() } }
        let cases: [([String], Int32, String)] = [
            (["create"], 64, "keys create needs --client ID"),
            (["create", "--client", "nobody"], 64, "unknown client 'nobody'"),
            (["create", "--client", "demo", "--expires", "1y"], 64, "expires must be a whole number"),
            (["list", "--name", "x"], 64, "--name does not apply to keys list"),
            (["revoke"], 64, "keys revoke takes one KEY-ID"),
            (["rotate"], 64, "unknown command 'rotate'"),
            (["list", "--bogus"], 64, "unknown option --bogus"),
            (["revoke", "key_0000000000000000"], 2, "key_0000000000000000: no such key"),
            (["revoke", "config:demo"], 2, "this key comes from the configuration; change it there"),
        ]
        for (arguments, status, message) in cases {
            let result = try await fixture.keys(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("biz-server keys: ") && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let missing = try await fixture.keys(["list", "--config", "/nonexistent/biz.json"], withConfig: false)
        #expect(missing.status == 78 && missing.stderr.contains("cannot read configuration /nonexistent/biz.json: no such file or directory"))
        let help = try await fixture.keys(["--help"])
        #expect(help.status == 0 && help.stdout.contains("biz-server keys create --client ID"))
        // --data-dir wins over the configuration's dataDirectory: another directory, no keys.
        let elsewhere = fixture.live.directory.appending(path: "elsewhere").path
        _ = try await fixture.keys(["create", "--client", "demo", "--data-dir", elsewhere])
        let there = try await fixture.keys(["list", "--json", "--data-dir", elsewhere])
        #expect((try Self.json(there.stdout) as? [Any])?.count == 2)
        let here = try await fixture.keys(["list", "--json"])
        #expect((try Self.json(here.stdout) as? [Any])?.count == 1)
    }
}
