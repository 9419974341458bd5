import Basics
import Foundation
import HTTPKit
import ServerShell
import TestSupport
import Testing
import UpServer

@Suite("UpServerConfiguration")
struct UpServerConfigurationTests {
    private static let minimal = #""keys":[{"accessKey":"a","secretKey":"s"}],"buckets":["b"]"#

    @Test func connectionLimitsComeFromTheFileWithTheDocumentedDefaults() throws {
        let defaults = try UpServerConfiguration.load(json: Data("{\(Self.minimal)}".utf8), environment: [:])
        #expect(defaults.connections == ConnectionLimits(maxConnections: 4096, headerTimeoutSeconds: 30, maxConnectionsPerAddress: 0))
        let set = try UpServerConfiguration.load(
            json: Data(#"{\#(Self.minimal),"maxConnections":64,"headerTimeoutSeconds":0,"maxConnectionsPerAddress":4}"#.utf8),
            environment: [:])
        #expect(set.connections == ConnectionLimits(maxConnections: 64, headerTimeoutSeconds: 0, maxConnectionsPerAddress: 4))
        #expect(throws: (any Error).self) {
            try UpServerConfiguration.load(json: Data(#"{\#(Self.minimal),"maxConnectionsPerAddress":-2}"#.utf8), environment: [:])
        }
    }

    @Test func orphanGraceSecondsIsReadAndDefaultsToAnHour() throws {
        #expect(try UpServerConfiguration.load(json: Data("{\(Self.minimal)}".utf8), environment: [:]).orphanGraceSeconds == 3600)
        let set = try UpServerConfiguration.load(json: Data(#"{\#(Self.minimal),"orphanGraceSeconds":2}"#.utf8), environment: [:])
        #expect(set.orphanGraceSeconds == 2)
    }

    @Test func publicBucketsAreReadAndDefaultToNone() throws {
        #expect(try UpServerConfiguration.load(json: Data("{\(Self.minimal)}".utf8), environment: [:]).publicBuckets == [])
        let set = try UpServerConfiguration.load(json: Data(#"{\#(Self.minimal),"publicBuckets":["b"]}"#.utf8), environment: [:])
        #expect(set.publicBuckets == ["b"])
    }

    @Test func theShippedDevelopmentFileLoadsAndWarnsAboutItsKeys() throws {
        let data = try Data(contentsOf: TestSupport.PythonSDK.repositoryRoot.appending(path: "Config/up-server.json"))
        let configuration = try UpServerConfiguration.load(json: data, environment: [:])
        #expect(configuration.keys == ["dev-access-key": "dev-secret-key"])
        #expect(configuration.warnings == [.developmentKeys])
        let production = try UpServerConfiguration.load(
            json: data, environment: ["UPGATE_ACCESS_KEY": "prod-ak", "UPGATE_SECRET_KEY": "prod-sk"])
        #expect(production.keys == ["prod-ak": "prod-sk"], "the pair replaces the file's list")
        #expect(production.warnings.isEmpty)
        #expect(throws: ConfigurationError("UPGATE_ACCESS_KEY is set but UPGATE_SECRET_KEY is not: set both, or neither")) {
            try UpServerConfiguration.load(json: data, environment: ["UPGATE_ACCESS_KEY": "prod-ak"])
        }
    }

    @Test(arguments: [
        (#"{\#(minimal),"callback":{"schem":"qbox"}}"#, #"unknown key "callback.schem" in the configuration (did you mean "callback.scheme"?)"#),
        (#"{\#(minimal),"callback":{"scheme":"plain"}}"#, #""callback.scheme" in the configuration must be "qbox" or "qiniu", got "plain""#),
        (#"{"keys":[{"accessKey":"a"}],"buckets":["b"]}"#, #""keys[0].secretKey" is missing in the configuration"#),
        (#"{\#(minimal),"publicBuckets":["pics"]}"#, #"publicBuckets lists "pics", which is not one of buckets"#),
        (#"{\#(minimal),"publicBucket":["b"]}"#, #"unknown key "publicBucket" in the configuration (did you mean "publicBuckets"?)"#),
        (#"{\#(minimal),"orphanGraceSeconds":0}"#, "orphanGraceSeconds must be > 0 (seconds an unnamed blob is kept; default 3600), got 0"),
        (#"{"buckets":["b"]}"#, "no key pair: list \"keys\" in the configuration file or set UPGATE_ACCESS_KEY and UPGATE_SECRET_KEY"),
    ])
    func mistakesAreOneLineNamingTheKey(json: String, message: String) {
        #expect(throws: ConfigurationError(message)) {
            try UpServerConfiguration.load(json: Data(json.utf8), environment: [:])
        }
    }
}
