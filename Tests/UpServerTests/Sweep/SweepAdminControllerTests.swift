import HTTPKit
import NativeCrypto
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// `POST /admin/sweep`: one sweep pass now, for operators and chaos suites.
@Suite("admin sweep")
struct SweepAdminControllerTests {
    let mac = HMACSHA1(key: Array(UpServerHarness.secretKey.utf8))

    func post(_ harness: UpServerHarness) async -> Response {
        let auth = QBoxSignature.sign(
            target: "/admin/sweep", body: [], contentType: nil, accessKey: UpServerHarness.accessKey, mac: mac)
        return await harness.send(.post, "/admin/sweep", headers: ["Authorization": auth])
    }

    @Test func aSignedPostSweepsNowAndCountsWhatWent() async throws {
        let harness = UpServerHarness { $0.orphanGraceSeconds = 2 }
        let (expired, orphan, kept) = (try harness.store.create(), try harness.store.create(), try harness.store.create())
        _ = try await harness.index.createBlock(expired, blockSize: 4, expiresAt: harness.now + 1, createdAt: 1)
        _ = try await harness.index.createBlock(kept, blockSize: 4, expiresAt: harness.now + 86_400, createdAt: 1)
        let fresh = await post(harness)
        #expect(fresh.status == 200)
        #expect(fresh.text == #"{"blocks":0,"uploads":0,"objects":0,"orphans":0}"#)

        harness.clock.advance(by: 3)
        let young = try harness.store.create()  // created just now: not an orphan yet
        let swept = await post(harness)
        #expect(swept.status == 200)
        #expect(swept.text == #"{"blocks":1,"uploads":0,"objects":0,"orphans":1}"#)
        #expect(Set(try harness.store.list()) == [kept, young], "the orphan went, the young blob stayed")
        #expect(!(try harness.store.list()).contains(orphan))
        #expect(await harness.index.block(expired) == nil)
    }

    @Test func anUnsignedOrForgedPostIsRefusedAndSweepsNothing() async throws {
        let harness = UpServerHarness { $0.orphanGraceSeconds = 1 }
        let orphan = try harness.store.create()
        harness.clock.advance(by: 10)
        #expect(await harness.send(.post, "/admin/sweep").status == 401)
        let forged = QBoxSignature.sign(
            target: "/admin/sweep", body: [], contentType: nil, accessKey: UpServerHarness.accessKey,
            mac: HMACSHA1(key: Array("wrong".utf8)))
        let refused = await harness.send(.post, "/admin/sweep", headers: ["Authorization": forged])
        #expect(refused.status == 401 && refused.text == #"{"error":"bad token"}"#)
        #expect(await harness.send(.get, "/admin/sweep").status == 405)
        #expect(try harness.store.list() == [orphan])
    }
}
