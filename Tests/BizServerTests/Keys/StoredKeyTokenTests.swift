import Basics
@testable import BizServer
import Foundation
import HTTPKit
import TestSupport
import UpCore
import Testing

/// Stored keys on `POST /v1/uptoken` and `GET /v1/uploads`, beside the configured ones.
@Suite struct StoredKeyTokenTests {
    /// Stores `key` for `client` in the harness's store and lets the server load it.
    static func store(_ key: String, id: String, in harness: BizServerHarness, client: String = "demo", expiresAt: Int64? = nil) async throws {
        try await harness.keys.insert(StoredAPIKey(
            id: id, clientID: client, keySHA256: BizServerConfiguration.apiKeyHash(key), createdAt: 1, expiresAt: expiresAt))
        try await harness.server.refreshKeys()
    }

    @Test func severalKeysOfOneClientWorkAtOnceBesideTheConfiguredOne() async throws {
        let harness = BizServerHarness()
        try await Self.store("upk_rotated_old", id: "key_old", in: harness)
        try await Self.store("upk_rotated_new", id: "key_new", in: harness)
        for key in ["upk_rotated_old", "upk_rotated_new", BizServerHarness.demoKey] {
            let response = await harness.token("{}", apiKey: key)
            #expect(response.status == 200, "\(key): \(response.text)")
        }
        let listing = await harness.send(.get, "/v1/uploads", headers: ["Authorization": "Bearer upk_rotated_new"])
        #expect(listing.status == 200)
        // The access log names the key used (its id, never the key), which shows when an old
        // key has stopped being used and can be revoked.
        let lines = harness.logs.capturedLines.filter { $0.contains("token issued") }
        #expect(lines.contains { $0.contains(#""apiKey":"key_old""#) })
        #expect(lines.contains { $0.contains(#""apiKey":"config:demo""#) })
        #expect(!harness.logs.capturedLines.contains { $0.contains("upk_rotated") })
    }

    @Test func aRevokedKeyIsRefusedAndTheOtherKeepsWorking() async throws {
        let harness = BizServerHarness()
        try await Self.store("upk_one", id: "key_one", in: harness)
        try await Self.store("upk_two", id: "key_two", in: harness)
        _ = try await harness.keys.revoke(id: "key_one", at: 2)
        try await harness.server.refreshKeys()
        let refused = await harness.token("{}", apiKey: "upk_one")
        #expect(refused.status == 401)
        #expect(refused.errorText == "bad API key")
        #expect(await harness.token("{}", apiKey: "upk_two").status == 200)
    }

    @Test func anExpiredKeyIsRefusedWithItsOwnReasonFromItsExpirySecondOn() async throws {
        let harness = BizServerHarness()
        let now = Int64(harness.clock.now())
        try await Self.store("upk_short", id: "key_short", in: harness, expiresAt: now + 10)
        harness.clock.advance(by: 9.5)
        #expect(await harness.token("{}", apiKey: "upk_short").status == 200)
        harness.clock.advance(by: 0.5)
        let refused = await harness.token("{}", apiKey: "upk_short")
        #expect(refused.status == 401)
        #expect(refused.errorText == "API key expired")
        #expect(harness.server.metrics.value("upgate_biz_tokens_refused_total", ["expired_api_key"]) == 1)
        let listing = await harness.send(.get, "/v1/uploads", headers: ["Authorization": "Bearer upk_short"])
        #expect(listing.status == 401)
    }

    @Test func aKeyOfAClientNoLongerConfiguredIsRefused() async throws {
        let harness = BizServerHarness()
        try await Self.store("upk_orphan", id: "key_orphan", in: harness, client: "gone")
        #expect(await harness.token("{}", apiKey: "upk_orphan").errorText == "bad API key")
    }

    /// With a `jwt` block, a bearer of three dot-separated base64url parts is a JWT; an issued
    /// key is never one, even if someone stored one shaped like that.
    @Test func anIssuedKeyIsNeverTakenForAJWT() async throws {
        let fixture = try await JWTFixture.load()
        let harness = BizServerHarness(jwt: try fixture.configuration())
        let dotted = "upk_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"
        try await Self.store(dotted, id: "key_dotted", in: harness)
        let response = await harness.token("{}", apiKey: dotted)
        #expect(response.status == 200, "\(response.text)")
    }

    @Test func aClientMayHaveNoConfiguredKeyAtAll() async throws {
        var configuration = BizServerConfiguration(
            accessKey: "ak", secretKey: "sk", clients: [.init(id: "store-only", apiKeySHA256: "", bucket: "b")])
        try configuration.validate()
        configuration.port = 0
        let keys = InMemoryAPIKeyStore()
        let server = BizServer(configuration: configuration, store: InMemoryUploadRecordStore(), keys: keys, logger: Logger(label: "t"))
        try await keys.insert(StoredAPIKey(id: "key_1", clientID: "store-only", keySHA256: BizServerConfiguration.apiKeyHash("upk_x"), createdAt: 0))
        try await server.refreshKeys()
        let ok = await server.router.respond(
            to: Request(method: .post, target: "/v1/uptoken", headers: ["Authorization": "Bearer upk_x"]), logger: Logger(label: "t"))
        #expect(ok.status == 200)
        let empty = await server.router.respond(
            to: Request(method: .post, target: "/v1/uptoken", headers: ["Authorization": "Bearer "]), logger: Logger(label: "t"))
        #expect(empty.status == 401)
    }
}
