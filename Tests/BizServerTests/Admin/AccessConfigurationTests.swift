import Basics
import BizServer
import Foundation
import ServerShell
import Testing

/// `adminTokenSHA256`, `UPGATE_ADMIN_TOKEN`, `trustedProxies`, `addressRateLimit`, and clients
/// without a configured key: each mistake stops the server with one line naming it.
@Suite struct AccessConfigurationTests {
    static let base = #""accessKey":"a","secretKey":"s","clients":[{"id":"demo","bucket":"b"}]"#

    static func load(_ members: String, environment: [String: String] = [:]) throws -> BizServerConfiguration {
        try BizServerConfiguration.load(json: Data("{\(base)\(members.isEmpty ? "" : ",")\(members)}".utf8), environment: environment)
    }

    @Test func theDefaultsAreNoAdminNoTrustedProxiesNoAddressLimit() throws {
        let configuration = try Self.load("")
        #expect(configuration.access.adminTokenSHA256 == nil)
        #expect(configuration.access.trustedProxies.isEmpty)
        #expect(configuration.access.addressRateLimit == nil)
        #expect(configuration.clients[0].apiKeySHA256 == "")  // stored keys only
    }

    @Test func theAdminTokenComesFromItsHashOrTheEnvironmentWhichWins() throws {
        let hash = BizServerConfiguration.apiKeyHash("from-the-file-0123")
        #expect(try Self.load(#""adminTokenSHA256":"\#(hash.uppercased())""#).access.adminTokenSHA256 == hash)
        let overridden = try Self.load(
            #""adminTokenSHA256":"\#(hash)""#, environment: ["UPGATE_ADMIN_TOKEN": "from-the-environment"])
        #expect(overridden.access.adminTokenSHA256 == BizServerConfiguration.apiKeyHash("from-the-environment"))
        #expect(try Self.load(#""adminTokenSHA256":null"#).access.adminTokenSHA256 == nil)
    }

    @Test func proxiesAndTheAddressLimitAreRead() throws {
        let configuration = try Self.load(
            #""trustedProxies":["10.0.0.0/8","::1","2001:db8::/32"],"addressRateLimit":{"tokensPerSecond":2,"burst":5}"#)
        #expect(configuration.access.trustedProxies.blocks.map(\.description) == ["10.0.0.0/8", "::1/128", "2001:db8::/32"])
        #expect(configuration.access.addressRateLimit?.tokensPerSecond == 2)
        #expect(configuration.access.addressRateLimit?.burst == 5)
    }

    @Test(arguments: [
        (#""adminTokenSHA256":"abc""#, [:], "adminTokenSHA256 must be 64 hex digits (the SHA-256 of the admin token)"),
        (#""adminTokenSHA256":7"#, [:], #""adminTokenSHA256" in the configuration must be a string, got 7"#),
        ("", ["UPGATE_ADMIN_TOKEN": "short"], "UPGATE_ADMIN_TOKEN must be at least 16 characters (e.g. openssl rand -hex 32)"),
        (#""trustedProxies":"10.0.0.0/8""#, [:], #""trustedProxies" in the configuration must be an array of strings, got "10.0.0.0/8""#),
        (#""trustedProxies":["10.0.0.0/8",8]"#, [:], #""trustedProxies[1]" in the configuration must be a string, got 8"#),
        (#""trustedProxies":["127.0.0.1","10.0.0.1/8"]"#, [:],
         "trustedProxies[1]: '10.0.0.1/8' has bits set after the prefix (did you mean 10.0.0.0/8?)"),
        (#""trustedProxies":["10.0.0.0/40"]"#, [:], "trustedProxies[0]: '10.0.0.0/40': the prefix length must be 0…32"),
        (#""trustedProxies":["proxy.internal"]"#, [:], "trustedProxies[0]: 'proxy.internal' is not an IPv4 or IPv6 address or CIDR block"),
        (#""addressRateLimit":5"#, [:], #""addressRateLimit" in the configuration must be an object, got 5"#),
        (#""addressRateLimit":{"tokensPerSecond":5}"#, [:], #""addressRateLimit" in the configuration needs both tokensPerSecond and burst"#),
        (#""addressRateLimit":{"tokensPerSecond":5,"burst":5,"brust":1}"#, [:],
         #"unknown key "addressRateLimit.brust" in the configuration (did you mean "addressRateLimit.burst"?)"#),
        (#""addressRateLimit":{"tokensPerSecond":0,"burst":5}"#, [:], "addressRateLimit needs tokensPerSecond > 0 and burst >= 1"),
    ] as [(String, [String: String], String)])
    func aMistakeIsOneLineNamingIt(members: String, environment: [String: String], message: String) {
        #expect(throws: ConfigurationError(message)) { try Self.load(members, environment: environment) }
    }
}
