import Basics
import BizServer
import Foundation
import HTTPKit
import NativePostgres
import ServerShell
import Testing

@Suite("BizServerConfiguration")
struct BizServerConfigurationTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func shippedDevelopmentConfigLoadsWithTheDocumentedCredentials() throws {
        let data = try Data(contentsOf: Self.repositoryRoot.appending(path: "Config/biz-server.json"))
        let configuration = try BizServerConfiguration.load(json: data, environment: [:])
        #expect(configuration.accessKey == "dev-access-key")
        #expect(configuration.secretKey == "dev-secret-key")
        #expect(configuration.port == 8080)
        #expect(configuration.publicBaseURL == nil)
        let demo = try #require(configuration.clients.first { $0.id == "demo" })
        #expect(demo.bucket == "demo")
        #expect(demo.resolvedKeyPrefix == "demo/")
        #expect(demo.apiKeySHA256 == BizServerConfiguration.apiKeyHash("dev-api-key"))
        #expect(configuration.access.adminTokenSHA256 == BizServerConfiguration.apiKeyHash("dev-admin-token"))
    }

    @Test func environmentOverridesSecretsAndHashesAPIKeys() throws {
        let json = Data(#"{"clients":[{"id":"app","bucket":"b"}]}"#.utf8)
        let configuration = try BizServerConfiguration.load(
            json: json,
            environment: [
                "UPGATE_ACCESS_KEY": "prod-ak", "UPGATE_SECRET_KEY": "prod-sk", "UPGATE_API_KEYS": "app=s3cret",
                "UPGATE_UP_HOSTS": "https://up1.example.com, https://up2.example.com",
            ])
        #expect(configuration.accessKey == "prod-ak")
        #expect(configuration.secretKey == "prod-sk")
        #expect(configuration.upHosts == ["https://up1.example.com", "https://up2.example.com"])
        #expect(configuration.clients[0].apiKeySHA256 == BizServerConfiguration.apiKeyHash("s3cret"))
        #expect(configuration.clients[0].resolvedKeyPrefix == "app/")
    }

    @Test func connectionLimitsComeFromTheFileWithTheDocumentedDefaults() throws {
        let defaults = try BizServerConfiguration.load(json: Data(#"{"accessKey":"a","secretKey":"s"}"#.utf8), environment: [:])
        #expect(defaults.connections == ConnectionLimits(maxConnections: 4096, headerTimeoutSeconds: 30, maxConnectionsPerAddress: 0))
        let set = try BizServerConfiguration.load(
            json: Data(#"{"accessKey":"a","secretKey":"s","maxConnections":100,"headerTimeoutSeconds":5,"maxConnectionsPerAddress":8}"#.utf8),
            environment: [:])
        #expect(set.connections == ConnectionLimits(maxConnections: 100, headerTimeoutSeconds: 5, maxConnectionsPerAddress: 8))
    }

    @Test func apiKeyHashIsHexSHA256() {
        // echo -n dev-api-key | sha256sum
        #expect(
            BizServerConfiguration.apiKeyHash("dev-api-key")
                == "6e1e4e1b8f8b36d08901cdb51b97841dfe20f5efd2fd2fd00768971408c46274")
    }

    @Test(arguments: [
        (#"{"accessKey":"a","secretKey":"s","clients":[]}"#, ""),
        (#"{"secretKey":"s","clients":[]}"#, "accessKey"),
        (#"{"accessKey":"a","secretKey":"s","clients":[{"id":"c","bucket":"b","apiKeySHA256":"xyz"}]}"#, "64 hex"),
        (#"{"accessKey":"a","secretKey":"s","clients":[{"id":"c","bucket":"b","apiKeySHA256":"\#(String(repeating: "a", count: 64))","tokenLifetimeSeconds":90000}]}"#, "24 h"),
        (#"{"accessKey":"a","secretKey":"s","port":"x"}"#, "port"),
        (#"{"accessKey":"a","secretKey":"s","headerTimeoutSeconds":-1}"#, "headerTimeoutSeconds"),
        (#"{"accessKey":"a","secretKey":"s","maxConnections":0}"#, "maxConnections"),
    ])
    func validationNamesTheBadSetting(json: String, fragment: String) {
        do {
            _ = try BizServerConfiguration.load(json: Data(json.utf8), environment: [:])
            #expect(fragment.isEmpty, "expected an error mentioning \(fragment)")
        } catch {
            #expect(!fragment.isEmpty && "\(error)".contains(fragment), "\(error)")
        }
    }

    @Test func theShippedFileWarnsAboutEveryDevelopmentCredential() throws {
        let data = try Data(contentsOf: Self.repositoryRoot.appending(path: "Config/biz-server.json"))
        let configuration = try BizServerConfiguration.load(json: data, environment: [:])
        #expect(configuration.warnings.map(\.message) == ["development credentials in use", "development API key in use"])
        #expect(DevelopmentCredentials.apiKeySHA256 == BizServerConfiguration.apiKeyHash(DevelopmentCredentials.apiKey))
        let production = try BizServerConfiguration.load(
            json: data,
            environment: ["UPGATE_ACCESS_KEY": "prod-ak", "UPGATE_SECRET_KEY": "prod-sk", "UPGATE_API_KEYS": "demo=real-key"])
        #expect(production.warnings.isEmpty)
        let empty = try BizServerConfiguration.load(json: Data(#"{"accessKey":"a","secretKey":"s"}"#.utf8), environment: [:])
        #expect(empty.warnings.map(\.message) == ["no API client configured"])
    }

    @Test(arguments: [
        (#"{"accessKey":"a","secretKey":"s","clients":[{"id":"c","bucket":"b","keyprefix":"x/"}]}"#,
         #"unknown key "clients[0].keyprefix" in the configuration (did you mean "clients[0].keyPrefix"?)"#),
        (#"{"accessKey":"a","secretKey":"s","rateLimit":{"burst":"many"}}"#,
         #""rateLimit.burst" in the configuration must be a number, got "many""#),
        (#"{"accessKey":"a","secretKey":"s","clients":[{"bucket":"b"}]}"#, #""clients[0].id" is missing in the configuration"#),
        (#"{"_comment":"notes","accessKey":"a","secretKey":"s","replay":{"_why":"ok"}}"#, ""),
    ])
    func strictReadingNamesTheKey(json: String, message: String) {
        do {
            _ = try BizServerConfiguration.load(json: Data(json.utf8), environment: [:])
            #expect(message.isEmpty, "expected: \(message)")
        } catch {
            #expect(error.description == message)
        }
    }
}

/// `database` / `UPGATE_BIZ_DATABASE_URL`: the environment wins, a bad value is one line that
/// never repeats a password.
@Suite struct BizServerDatabaseSettingTests {
    static func load(_ json: String, environment: [String: String] = [:]) throws -> BizServerConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("biz-db-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        return try BizServerConfiguration.load(path: file, environment: environment)
    }

    static let base = #"{"accessKey": "ak", "secretKey": "sk", "clients": [{"id": "demo", "bucket": "demo"}]"#

    @Test func theDatabaseComesFromTheFileOrTheEnvironment() throws {
        #expect(try Self.load(Self.base + "}").database == nil)
        let file = try Self.load(Self.base + #", "database": "postgresql://upgate@127.0.0.1:5432/a"}"#)
        #expect(file.database == "postgresql://upgate@127.0.0.1:5432/a")
        #expect(try file.databaseConnectionString()?.description == "upgate@127.0.0.1:5432/a")
        let both = try Self.load(
            Self.base + #", "database": "postgresql://upgate@127.0.0.1:5432/a"}"#,
            environment: ["UPGATE_BIZ_DATABASE_URL": "postgresql://upgate@10.0.0.1:5432/b"])
        #expect(both.database == "postgresql://upgate@10.0.0.1:5432/b")
    }

    @Test(arguments: [
        ("postgresql://upgate:hunter2@127.0.0.1/upgate", "carries a password"),
        ("mysql://upgate:hunter2@127.0.0.1/upgate", "must be a postgresql:// URL"),
    ])
    func aBadDatabaseIsOneLineWithoutThePassword(value: String, expected: String) throws {
        do {
            _ = try Self.load(Self.base + "}", environment: ["UPGATE_BIZ_DATABASE_URL": value])
            Issue.record("accepted \(value)")
        } catch {
            let line = "\(error)"
            #expect(line.contains(expected))
            #expect(!line.contains("hunter2"))
            #expect(!line.contains("\n"))
        }
    }
}
