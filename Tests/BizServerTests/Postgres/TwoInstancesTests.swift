import BizServer
import HTTPKit
import NativePostgres
import Outbox
import TestSupport
import Testing

/// Issue 12 §1: two biz-server instances on one PostgreSQL database behave as one server,
/// whichever instance a request lands on.
@Suite("two biz-server instances on one PostgreSQL")
struct TwoInstancesTests {
    /// Instances A and B (each with its own pool) on a fresh database, one clock.
    static func pair(
        rateLimit: BizServerConfiguration.RateLimit = .init(tokensPerSecond: 1000, burst: 1000)
    ) async throws -> (a: BizServerHarness, b: BizServerHarness, database: PostgresBizDatabase) {
        let first = try await postgresBizDatabase()
        let second = try await postgresBizDatabase(sharing: first)
        let clock = ManualClock(1_900_000_000)
        let a = BizServerHarness(rateLimit: rateLimit, postgres: first, clock: clock)
        let b = BizServerHarness(rateLimit: rateLimit, postgres: second, clock: clock)
        return (a, b, first)
    }

    @Test func aCallbackRedeliveredToTheOtherInstanceGetsTheFirstReplyAndMakesOneRecord() async throws {
        let (a, b, database) = try await Self.pair()
        let (_, policy) = try await a.issuedPolicy(#"{"key":"demo/a"}"#)
        let callback = a.callback(for: policy, key: "demo/a")
        let first = await a.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        a.clock.advance(by: 30)
        let second = await b.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
        #expect(first.status == 200 && second.status == 200)
        #expect(first.bodyBytes == second.bodyBytes)
        #expect(try await database.records.count() == 1)
        // Psql, not our store, counts the rows.
        let rows = try await database.pool.withConnection { try $0.query("SELECT count(*) FROM upload_records").first?.decode(0, as: Int64.self) }
        #expect(rows == 1)
        // Both instances list it.
        #expect(await b.send(.get, "/v1/uploads", headers: ["Authorization": "Bearer \(BizServerHarness.demoKey)"]).text
            == (await a.send(.get, "/v1/uploads", headers: ["Authorization": "Bearer \(BizServerHarness.demoKey)"]).text))
    }

    @Test func concurrentDuplicatesOnBothInstancesMakeOneRecord() async throws {
        let (a, b, database) = try await Self.pair()
        let (_, policy) = try await a.issuedPolicy(#"{"key":"demo/race"}"#)
        let callback = a.callback(for: policy, key: "demo/race")
        let replies = await withTaskGroup(of: [UInt8].self) { group in
            for index in 0..<8 {
                let instance = index % 2 == 0 ? a : b
                group.addTask {
                    let reply = await instance.postQBox(target: callback.target, body: callback.body, contentType: callback.contentType)
                    return reply.status == 200 ? reply.bodyBytes : []
                }
            }
            return await group.reduce(into: [[UInt8]]()) { $0.append($1) }
        }
        #expect(Set(replies).count == 1 && !replies[0].isEmpty)
        #expect(try await database.records.count() == 1)
    }

    @Test func aKeyCreatedThroughTheAdminAPIOfOneInstanceWorksOnTheOther() async throws {
        let (a, b, _) = try await Self.pair()
        let created = await a.admin(.post, "/v1/admin/keys", body: #"{"client":"demo","name":"ci"}"#)
        #expect(created.status == 201, "\(created.text)")
        let key = try #require(try created.jsonObject()["key"] as? String)
        #expect(await b.token("{}", apiKey: key).status == 401)  // B has not polled yet
        try await b.server.refreshKeys()  // what B's poller does every 250 ms
        #expect(await b.token("{}", apiKey: key).status == 200)
        let id = try #require(try created.jsonObject()["id"] as? String)
        #expect(await b.admin(.delete, "/v1/admin/keys/\(id)").status == 200)
        try await a.server.refreshKeys()
        #expect(await a.token("{}", apiKey: key).status == 401)
    }

    @Test func theRateLimitIsSharedBurstSpentAcrossBothInstances() async throws {
        let (a, b, _) = try await Self.pair(rateLimit: .init(tokensPerSecond: 0.5, burst: 4))
        var statuses: [Int] = []
        for index in 0..<6 { statuses.append(await (index % 2 == 0 ? a : b).token("{}").status) }
        #expect(statuses == [200, 200, 200, 200, 429, 429])
        let limited = await a.token("{}")
        #expect(limited.headers["Retry-After"] == "2")
        #expect(limited.errorText == "too many token requests")
        #expect(await b.token("{}", apiKey: BizServerHarness.otherKey).status == 200)  // its own bucket
        a.clock.advance(by: 2)
        #expect(await b.token("{}").status == 200)
    }

    /// The webhook deliveries of a record written through A are in the one shared outbox: one
    /// instance's claim hides them from the other, which takes them over once the lease is out.
    @Test func webhookDeliveriesAreClaimedByOneInstanceAndTakenOverAfterTheLease() async throws {
        let first = try await postgresBizDatabase()
        let second = try await postgresBizDatabase(sharing: first)
        let (record, _) = try await first.records.record(
            upload(), receivedAt: 1_900_000_000_000,
            webhooks: { [OutboxMessage(payload: "for \($0.id)", leaseSeconds: 30)] })
        let a = first.records.webhookDeliveries
        let b = second.records.webhookDeliveries
        #expect(try await a.claimDue(owner: "a", now: 1_900_000_000, limit: 10).map(\.payload) == ["for \(record.id)"])
        #expect(try await b.claimDue(owner: "b", now: 1_900_000_010, limit: 10).isEmpty)
        // A stopped without sending: after its lease B takes the delivery over, once.
        #expect(try await b.claimDue(owner: "b", now: 1_900_000_031, limit: 10).map(\.payload) == ["for \(record.id)"])
        #expect(try await a.claimDue(owner: "a", now: 1_900_000_032, limit: 10).isEmpty)
    }
}
