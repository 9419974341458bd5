import Basics
import BizServer
import Foundation
import HTTPKit
import ServerShell
import TestSupport
import Testing
import UpCore

/// `trustedProxies` and `addressRateLimit` on a real socket: the peer is 127.0.0.1, and
/// `X-Forwarded-For` counts only when that peer is trusted.
@Suite("Client addresses on a real port")
struct ClientAddressLiveTests {
    /// Three requests per address, then (practically) none.
    static let limit = BizServerConfiguration.RateLimit(tokensPerSecond: 0.001, burst: 3)

    static func tokens(_ live: LiveServer, forwardedFor: [String?]) async throws -> [Int] {
        var statuses: [Int] = []
        for address in forwardedFor {
            var headers = [("Authorization", "Bearer \(BizServerHarness.demoKey)")]
            if let address { headers.append(("X-Forwarded-For", address)) }
            statuses.append(try await live.request("POST", "/v1/uptoken", headers: headers, body: Array("{}".utf8)).status)
        }
        return statuses
    }

    static func remotes(_ live: LiveServer) -> [String] {
        live.logs.capturedLines.compactMap { try? JSONValue.parse($0) }
            .filter { $0["msg"]?.stringValue == "request" && $0["path"]?.stringValue == "/v1/uptoken" }
            .compactMap { $0["remote"]?.stringValue }
    }

    @Test func aSpoofedForwardedForFromAnUntrustedPeerIsIgnored() async throws {
        let live = try LiveServer(access: .init(addressRateLimit: Self.limit))
        defer { Task { await live.stop() } }
        let statuses = try await Self.tokens(live, forwardedFor: ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", nil])
        #expect(statuses == [200, 200, 200, 429, 429])
        #expect(Self.remotes(live) == Array(repeating: "127.0.0.1", count: 5))
        let refused = try await live.request(
            "POST", "/v1/uptoken", headers: [("Authorization", "Bearer \(BizServerHarness.demoKey)"), ("X-Forwarded-For", "203.0.113.9")])
        #expect(refused.status == 429)
        #expect(refused.text.contains("too many requests from this address"))
        #expect(Int(refused.headers["Retry-After"] ?? "") ?? 0 >= 1)
    }

    @Test func aTrustedProxyNamesTheClient() async throws {
        let live = try LiveServer(access: .init(trustedProxies: try TrustedProxies(["127.0.0.0/8"]), addressRateLimit: Self.limit))
        defer { Task { await live.stop() } }
        let addresses = ["198.51.100.1", "198.51.100.2", "spoof, 198.51.100.3", "2001:DB8::1", "198.51.100.4, 127.0.0.7"]
        #expect(try await Self.tokens(live, forwardedFor: addresses) == [200, 200, 200, 200, 200])
        #expect(Self.remotes(live) == ["198.51.100.1", "198.51.100.2", "198.51.100.3", "2001:db8::1", "198.51.100.4"])
        // One client behind the proxy still has its own bucket of three.
        #expect(try await Self.tokens(live, forwardedFor: ["198.51.100.1", "198.51.100.1", "198.51.100.1"]) == [200, 200, 429])
        // An IPv6 client's /64 is one bucket, whatever address in it it takes.
        #expect(try await Self.tokens(live, forwardedFor: ["2001:db8::2", "2001:db8::3", "2001:db8::4"]) == [200, 200, 429])
        // No header: the proxy itself is the client.
        #expect(try await Self.tokens(live, forwardedFor: [nil]) == [200])
    }

    @Test func aPeerOutsideTheTrustedBlocksIsNotBelieved() async throws {
        let live = try LiveServer(access: .init(trustedProxies: try TrustedProxies(["10.0.0.0/8"]), addressRateLimit: Self.limit))
        defer { Task { await live.stop() } }
        let statuses = try await Self.tokens(live, forwardedFor: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"])
        #expect(statuses == [200, 200, 200, 429])
        #expect(Set(Self.remotes(live)) == ["127.0.0.1"])
    }

    @Test func adminTokenGuessesFromOneAddressAreLimited() async throws {
        let live = try LiveServer(access: .init(
            adminTokenSHA256: BizServerConfiguration.apiKeyHash(BizServerHarness.adminToken), addressRateLimit: Self.limit))
        defer { Task { await live.stop() } }
        var statuses: [Int] = []
        for guess in 0..<5 {
            statuses.append(try await live.request("GET", "/v1/admin/keys", headers: [("Authorization", "Bearer guess-\(guess)")]).status)
        }
        #expect(statuses == [401, 401, 401, 429, 429])
        // The token bucket of /v1/uptoken is a different one.
        #expect(try await Self.tokens(live, forwardedFor: [nil]) == [200])
    }
}
