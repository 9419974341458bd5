import Foundation
import HTTPKit
import NativeCrypto
import Outbox
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// `GET /admin/outbox`: the callback outbox by state, for operators.
@Suite("admin outbox")
struct OutboxAdminControllerTests {
    let mac = HMACSHA1(key: Array(UpServerHarness.secretKey.utf8))

    func get(_ harness: UpServerHarness, _ target: String) async -> Response {
        let auth = QBoxSignature.sign(
            target: target, body: [], contentType: nil, accessKey: UpServerHarness.accessKey, mac: mac)
        return await harness.send(.get, target, headers: ["Authorization": auth])
    }

    func enqueue(_ harness: UpServerHarness, key: String, claimedBy owner: String? = nil) async throws -> OutboxEntry {
        try await CallbackFixtures.store(
            harness.index, key: key, now: harness.now,
            message: CallbackFixtures.message(key: key, url: "http://biz.example/cb?token=s3cret", body: "a=1"),
            claimedBy: owner)
    }

    @Test func listsByStateWithoutSecretsAndPendingIncludesWhatIsBeingAttempted() async throws {
        let harness = UpServerHarness()
        let waiting = try await enqueue(harness, key: "waiting")
        let attempted = try await enqueue(harness, key: "attempted", claimedBy: "up-a")
        let gaveUp = try await enqueue(harness, key: "gave-up", claimedBy: "up-a")
        let dead = OutboxDelivery(state: .dead, attempts: 1)
        #expect(try await harness.index.outbox.record(gaveUp.id, claimedBy: "up-a", as: dead, outcome: .failed(reason: "timeout")))

        let pending = await get(harness, "/admin/outbox?state=pending&limit=5")
        #expect(pending.status == 200)
        #expect(pending.json["state"] as? String == "pending")
        let items = try #require(pending.json["items"] as? [[String: Any]])
        #expect(items.map { $0["key"] as? String } == ["attempted", "waiting"])  // newest first
        #expect(items[0]["state"] as? String == "claimed" && items[0]["owner"] as? String == "up-a")
        #expect(items[0]["leaseUntil"] as? Int == Int(harness.now) + 10)
        #expect(items[1]["state"] as? String == "pending" && items[1]["nextAttemptAt"] as? Int == Int(harness.now))
        #expect(items[1]["id"] as? Int == Int(waiting.id) && items[1]["hash"] as? String == "Fh")
        #expect(items[1]["urls"] as? [String] == ["http://biz.example/cb"])
        #expect(!pending.text.contains("s3cret") && !pending.text.contains("a=1"))
        #expect(await get(harness, "/admin/outbox").json["items"] as? [Any] != nil)  // pending by default

        let claimed = await get(harness, "/admin/outbox?state=claimed")
        #expect((claimed.json["items"] as? [[String: Any]])?.map { $0["id"] as? Int } == [Int(attempted.id)])
        for state in ["dead", "failed"] {
            let listed = await get(harness, "/admin/outbox?state=\(state)")
            #expect(listed.json["state"] as? String == "dead")
            let only = try #require((listed.json["items"] as? [[String: Any]])?.first)
            #expect(only["key"] as? String == "gave-up" && only["lastError"] as? String == "timeout")
        }
        let page = await get(harness, "/admin/outbox?state=pending&limit=1&before=\(attempted.id)")
        #expect((page.json["items"] as? [[String: Any]])?.map { $0["key"] as? String } == ["waiting"])
        #expect((await get(harness, "/admin/outbox?state=delivered")).json["items"] as? [Any] != nil)
        for bad in ["?state=weird", "?limit=0", "?before=x"] {
            #expect(await get(harness, "/admin/outbox" + bad).status == 400, "\(bad)")
        }
        #expect(await harness.send(.get, "/admin/outbox").status == 401)
    }

    @Test func aDeadEntryIsRequeuedAndDeliveredByTheRetrier() async throws {
        let harness = UpServerHarness()
        let entry = try await enqueue(harness, key: "gave-up", claimedBy: "up-a")
        #expect(try await harness.index.outbox.record(
            entry.id, claimedBy: "up-a", as: OutboxDelivery(state: .dead, attempts: 13), outcome: .failed(reason: "down")))
        let target = "/admin/outbox/\(entry.id)/requeue"
        let auth = QBoxSignature.sign(target: target, body: [], contentType: nil, accessKey: UpServerHarness.accessKey, mac: mac)
        #expect(await harness.send(.post, target).status == 401)
        let requeued = await harness.send(.post, target, headers: ["Authorization": auth])
        #expect(requeued.status == 200)
        #expect(requeued.json["state"] as? String == "pending" && requeued.json["nextAttemptAt"] as? Int == Int(harness.now))
        let dead = await get(harness, "/admin/outbox?state=dead")
        #expect((dead.json["items"] as? [Any])?.isEmpty == true)
        let again = await harness.send(.post, target, headers: ["Authorization": auth])
        #expect(again.status == 612 && again.errorText == "no such dead outbox entry")
        let bad = "/admin/outbox/x/requeue"
        let badAuth = QBoxSignature.sign(target: bad, body: [], contentType: nil, accessKey: UpServerHarness.accessKey, mac: mac)
        #expect(await harness.send(.post, bad, headers: ["Authorization": badAuth]).status == 400)
        // The retrier's next pass delivers it.
        _ = await harness.server.retrier.runOnce()
        #expect(harness.callbacks.sent.count == 1)
        #expect(try await harness.index.outbox.entry(id: entry.id)?.delivery.state.phase == .delivered)
    }
}
