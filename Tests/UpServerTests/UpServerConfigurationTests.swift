import Foundation
import HTTPKit
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
}
