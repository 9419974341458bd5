import Basics
@testable import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing

@Suite struct AdminKeysControllerTests {
    static let routes: [(HTTPMethod, String, String?)] = [
        (.get, "/v1/admin/keys", nil), (.post, "/v1/admin/keys", #"{"client":"demo"}"#), (.delete, "/v1/admin/keys/key_x", nil),
    ]

    @Test(arguments: [
        (nil, "missing admin token", "missing_admin_token"),
        ("wrong-admin-token-0123456789", "bad admin token", "bad_admin_token"),
        (BizServerHarness.demoKey, "bad admin token", "bad_admin_token"),  // an API key is no admin token
        ("", "missing admin token", "missing_admin_token"),  // `Bearer ` alone
        (String(repeating: "a", count: 600), "bad admin token", "bad_admin_token"),
    ] as [(String?, String, String)])
    func everyRouteRefusesWithoutTheAdminToken(token: String?, message: String, outcome: String) async throws {
        let harness = BizServerHarness()
        for (method, target, body) in Self.routes {
            let response = await harness.admin(method, target, body: body, token: token)
            #expect(response.status == 401, "\(method) \(target)")
            #expect(response.errorText == message)
        }
        #expect(try await harness.keys.keys().isEmpty)
        for operation in ["keys.list", "keys.create", "keys.revoke"] {
            #expect(harness.server.metrics.value("upgate_biz_admin_requests_total", [operation, outcome]) == 1)
        }
    }

    @Test func withoutAConfiguredTokenTheAdminAPIIsOff() async throws {
        let harness = BizServerHarness(access: .init())
        for (method, target, body) in Self.routes {
            for token in [BizServerHarness.adminToken, nil] {
                let response = await harness.admin(method, target, body: body, token: token)
                #expect(response.status == 401)
                #expect(response.errorText == "admin API disabled: set UPGATE_ADMIN_TOKEN or adminTokenSHA256")
            }
        }
    }

    @Test func createListRevoke() async throws {
        let harness = BizServerHarness()
        let created = await harness.admin(.post, "/v1/admin/keys", body: #"{"client":"demo","name":"ci","expires":"90d"}"#)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.headers["Cache-Control"] == "no-store")
        let object = try created.jsonObject()
        #expect(Set(object.keys) == ["id", "key", "client", "name", "createdAt", "expiresAt"])
        let key = try #require(object["key"] as? String)
        let id = try #require(object["id"] as? String)
        let now = Int64(harness.clock.now())
        #expect(object["client"] as? String == "demo" && object["name"] as? String == "ci")
        #expect(object["createdAt"] as? Int64 == now)
        #expect(object["expiresAt"] as? Int64 == now + 90 * 86_400)
        #expect(try await harness.keys.keys().map(\.keySHA256) == [BizServerConfiguration.apiKeyHash(key)])

        // Works on this server as soon as the answer is there.
        #expect(await harness.token("{}", apiKey: key).status == 200)

        let listed = await harness.admin(.get, "/v1/admin/keys")
        #expect(listed.status == 200)
        #expect(!listed.text.contains(key) && !listed.text.contains(BizServerConfiguration.apiKeyHash(key)))
        let items = try #require(try listed.jsonObject()["items"] as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == ["config:demo", "config:other", id])
        #expect(items[0]["readOnly"] as? Bool == true && items[0]["source"] as? String == "configuration")
        #expect(items[2]["readOnly"] as? Bool == false && items[2]["state"] as? String == "active")
        #expect(Set(items[2].keys) == ["id", "client", "name", "source", "readOnly", "state", "createdAt", "expiresAt", "revokedAt"])

        let revoked = await harness.admin(.delete, "/v1/admin/keys/\(id)")
        #expect(revoked.status == 200)
        #expect(try revoked.jsonObject()["state"] as? String == "revoked")
        #expect(try revoked.jsonObject()["revokedAt"] as? Int64 == now)
        #expect(await harness.token("{}", apiKey: key).status == 401)
        harness.clock.advance(by: 60)
        let again = await harness.admin(.delete, "/v1/admin/keys/\(id)")
        #expect(again.status == 200)
        #expect(try again.jsonObject()["revokedAt"] as? Int64 == now)  // the first revocation stands

        for operation in ["keys.create", "keys.list", "keys.revoke"] {
            #expect(harness.server.metrics.value("upgate_biz_admin_requests_total", [operation, "ok"]) >= 1)
        }
        #expect(harness.server.metrics.value("upgate_biz_api_keys_created_total") == 1)
        #expect(harness.server.metrics.value("upgate_biz_api_keys_revoked_total") == 1)
        let log = harness.logs.capturedLines.joined(separator: "\n")
        #expect(!log.contains(key) && !log.contains(BizServerHarness.adminToken))
        #expect(log.contains(#""operation":"keys.create""#) && log.contains(#""keyId":"\#(id)""#))
    }

    @Test func listingFiltersByClient() async throws {
        let harness = BizServerHarness()
        _ = await harness.admin(.post, "/v1/admin/keys", body: #"{"client":"other"}"#)
        let items = try #require(try await harness.admin(.get, "/v1/admin/keys?client=other").jsonObject()["items"] as? [[String: Any]])
        #expect(items.count == 2 && items.allSatisfy { $0["client"] as? String == "other" })
        let none = try #require(try await harness.admin(.get, "/v1/admin/keys?client=nobody").jsonObject()["items"] as? [Any])
        #expect(none.isEmpty)
    }

    @Test(arguments: [
        ("config:demo", 409, "this key comes from the configuration; change it there"),
        ("key_0000000000000000", 404, "no such key"),
        ("config:nobody", 404, "no such key"),
    ])
    func revokingWhatIsNotAStoredKey(id: String, status: Int, message: String) async throws {
        let harness = BizServerHarness()
        let response = await harness.admin(.delete, "/v1/admin/keys/\(id)")
        #expect(response.status == status)
        #expect(response.errorText == message)
        #expect(await harness.token("{}").status == 200)  // the configured key still works
    }

    @Test func aStoreThatFailsIsA503() async throws {
        let harness = BizServerHarness()
        await harness.keys.fail(with: StoreDown())
        for (method, target, body) in Self.routes {
            let response = await harness.admin(method, target, body: body)
            #expect(response.status == 503, "\(method) \(target)")
            #expect(response.errorText == "API key store unavailable, retry later")
        }
        #expect(!harness.logs.capturedLines.contains { $0.contains("handler failed") })
    }
}
