import Basics
@testable import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing

/// Malformed admin requests (what the fuzz suite will send) get a status the OpenAPI document
/// lists for that operation and a JSON `{"error": …}` body — never a 5xx, never a created key.
@Suite struct AdminGarbageTests {
    static let createBodies: [String] = [
        "", "{", "[]", "null", "\"demo\"", "42", "{}", #"{"client":null}"#, #"{"client":1}"#, #"{"client":["demo"]}"#,
        #"{"client":"demo","client":"demo"}"#, #"{"client":"demo","expire":"1d"}"#, #"{"client":"nobody"}"#,
        #"{"client":""}"#, #"{"client":"demo","expires":"0d"}"#, #"{"client":"demo","expires":"1y"}"#,
        #"{"client":"demo","expires":90}"#, #"{"client":"demo","expires":"99999999999d"}"#,
        #"{"client":"demo","name":"\u0007"}"#, #"{"client":"demo","name":{"a":1}}"#,
        "{\"client\":\"demo\",\"name\":\"\(String(repeating: "n", count: 129))\"}", #"{"client":"de\u0000mo"}"#,
        String(repeating: "[", count: 10_000), "\u{FEFF}{\"client\":\"demo\"}", "{\"client\":\"demo\"} trailing",
        "{\"client\":\"\\ud800\"}", String(repeating: "x", count: 17_000),
    ]

    static let deleteTargets: [String] = [
        "/v1/admin/keys/%00", "/v1/admin/keys/..%2F..%2Fetc", "/v1/admin/keys/" + String(repeating: "k", count: 4000),
        "/v1/admin/keys/config%3Ademo", "/v1/admin/keys/%E2%82%AC", "/v1/admin/keys/key_%", "/v1/admin/keys/config:",
        "/v1/admin/keys/key_x?force=1",
    ]

    static let listTargets: [String] = [
        "/v1/admin/keys?client", "/v1/admin/keys?client=demo&client=demo", "/v1/admin/keys?limit=1", "/v1/admin/keys?%ZZ",
        "/v1/admin/keys?client=%00", "/v1/admin/keys?&&&", "/v1/admin/keys?client=" + String(repeating: "c", count: 5000),
    ]

    static func documented(_ method: String, _ path: String) throws -> Set<Int> {
        let operation = try OpenAPIDocumentTests.operation(method, path)
        return Set((operation["responses"] as? [String: Any] ?? [:]).keys.compactMap { Int($0) })
    }

    static func check(_ response: Response, allowed: Set<Int>, _ what: String) {
        #expect(allowed.contains(response.status) && response.status < 500, "\(what): \(response.status) \(response.text)")
        #expect(response.errorText != nil || response.status < 300, "\(what): \(response.text)")
    }

    @Test func garbageCreationBodiesAreDocumented4xx() async throws {
        let allowed = try Self.documented("post", "/v1/admin/keys")
        let harness = BizServerHarness()
        for body in Self.createBodies {
            for token in [BizServerHarness.adminToken, nil, "x"] {
                let response = await harness.admin(.post, "/v1/admin/keys", body: body, token: token)
                Self.check(response, allowed: allowed, "POST \(body.prefix(40)) token \(token?.prefix(4) ?? "none")")
                #expect(response.status != 201, "\(body.prefix(40))")
            }
        }
        #expect(try await harness.keys.keys().isEmpty)
    }

    @Test func garbageRevocationsAndListingsAreDocumented4xx() async throws {
        let harness = BizServerHarness()
        let deletions = try Self.documented("delete", "/v1/admin/keys/{id}")
        for target in Self.deleteTargets {
            for token in [BizServerHarness.adminToken, nil] {
                Self.check(await harness.admin(.delete, target, token: token), allowed: deletions, "DELETE \(target.prefix(60))")
            }
        }
        let listings = try Self.documented("get", "/v1/admin/keys")
        for target in Self.listTargets {
            for token in [BizServerHarness.adminToken, nil] {
                Self.check(await harness.admin(.get, target, token: token), allowed: listings, "GET \(target.prefix(60))")
            }
        }
        #expect(await harness.token("{}").status == 200)
    }

    @Test func oddAuthorizationHeadersAre401() async throws {
        let harness = BizServerHarness()
        let values = [
            "Bearer", "Bearer ", "bearer \(BizServerHarness.adminToken) extra", "Basic YWRtaW46YWRtaW4=",
            "Bearer \(BizServerHarness.adminToken.uppercased())", "Bearer\t\(BizServerHarness.adminToken)",
            "Bearer \(BizServerHarness.adminToken)\u{0}", "Token \(BizServerHarness.adminToken)",
        ]
        for value in values {
            let response = await harness.send(.get, "/v1/admin/keys", headers: ["Authorization": value])
            #expect(response.status == 401, "\(value.debugDescription)")
        }
        // The scheme is case-insensitive (RFC 9110 §11.1), and surrounding spaces do not matter.
        let ok = await harness.send(.get, "/v1/admin/keys", headers: ["Authorization": "bEaReR   \(BizServerHarness.adminToken) "])
        #expect(ok.status == 200)
    }
}
