import Foundation
import NativeStore
import Outbox
import Testing

/// The `OutboxStore` contract, run against every implementation (in-memory twin, SQLite): each
/// transition of `OutboxDelivery`, applied by the store as a conditional write.
@Suite("OutboxStore contract")
struct OutboxStoreContractTests {
    static let schedule = OutboxDelivery.Schedule(maxAttempts: 2, firstDelay: 5, maxDelay: 60)

    static func message(_ payload: String, lease: Int64 = 30, claimedBy: String? = nil) -> OutboxMessage {
        OutboxMessage(payload: payload, leaseSeconds: lease, claimedBy: claimedBy)
    }

    @Test(arguments: OutboxImplementation.allCases)
    func enqueuedEntriesArePendingOrBornClaimed(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let pending = try await store.enqueue(Self.message("a"), now: 100)
        let claimed = try await store.enqueue(Self.message("b", claimedBy: "me"), now: 100)
        #expect(pending.delivery == OutboxDelivery(state: .pending(dueAt: 100), attempts: 0))
        #expect(claimed.delivery == OutboxDelivery(state: .claimed(owner: "me", leaseUntil: 130), attempts: 1))
        #expect(claimed.id > pending.id)
        #expect(try await store.entry(id: pending.id) == pending)
        #expect(try await store.entry(id: claimed.id) == claimed)
        #expect(try await store.entry(id: 999) == nil)
        #expect(pending.payload == "a" && pending.createdAt == 100 && pending.leaseSeconds == 30)
        #expect(try await store.depth() == 2)
    }

    @Test(arguments: OutboxImplementation.allCases)
    func claimTakesWhatTheMachineCallsClaimableInDueOrder(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let early = try await store.enqueue(Self.message("early"), now: 90)
        let live = try await store.enqueue(Self.message("live", claimedBy: "other"), now: 95)  // lease until 125
        let expired = try await store.enqueue(Self.message("expired", lease: 5, claimedBy: "dead"), now: 92)  // until 97
        let later = try await store.enqueue(Self.message("later"), now: 100)
        let future = try await store.enqueue(Self.message("future"), now: 101)
        let claimed = try await store.claimDue(owner: "me", now: 100, limit: 10)
        // Due order: early (90), expired claim (97), later (100); the live claim and the future one stay.
        #expect(claimed.map(\.id) == [early.id, expired.id, later.id])
        for entry in claimed {
            #expect(entry.delivery.state == .claimed(owner: "me", leaseUntil: 100 + entry.leaseSeconds))
        }
        #expect(claimed.map(\.attempts) == [1, 2, 1])
        #expect(try await store.entry(id: live.id)?.delivery.state == .claimed(owner: "other", leaseUntil: 125))
        #expect(try await store.entry(id: future.id)?.delivery.state == .pending(dueAt: 101))
        #expect(try await store.claimDue(owner: "you", now: 100, limit: 10).isEmpty)
        #expect(try await store.claimDue(owner: "me", now: 100, limit: 0).isEmpty)
        #expect(try await store.claimDue(owner: "you", now: 101, limit: 1).map(\.id) == [future.id])
    }

    @Test(arguments: OutboxImplementation.allCases)
    func onlyTheClaimantRecordsAndATakenOverOwnerWritesNothing(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let entry = try await store.enqueue(Self.message("m", lease: 10, claimedBy: "a"), now: 100)
        // The lease runs out; b takes over.
        let taken = try #require(try await store.claimDue(owner: "b", now: 110, limit: 1).first)
        #expect(taken.delivery == OutboxDelivery(state: .claimed(owner: "b", leaseUntil: 120), attempts: 2))
        // a's late outcome is refused...
        var late = entry.delivery
        _ = late.handle(.succeeded(owner: "a"), schedule: Self.schedule)
        #expect(try await store.record(entry.id, claimedBy: "a", as: late, outcome: .delivered(reply: "late")) == false)
        #expect(try await store.entry(id: entry.id) == taken)
        // ...b's failure is recorded: the last of 2 attempts, so dead.
        var failed = taken.delivery
        #expect(failed.handle(.failed(owner: "b", now: 111), schedule: Self.schedule) == .record)
        #expect(try await store.record(entry.id, claimedBy: "b", as: failed, outcome: .failed(reason: "503")))
        let dead = try #require(try await store.entry(id: entry.id))
        #expect(dead.delivery == OutboxDelivery(state: .dead, attempts: 2))
        #expect(dead.lastError == "503" && dead.reply == nil)
        #expect(try await store.record(entry.id, claimedBy: "b", as: failed, outcome: .failed(reason: "x")) == false)
        #expect(try await store.record(999, claimedBy: "b", as: failed, outcome: .failed(reason: "x")) == false)
        #expect(try await store.depth() == 0)
    }

    @Test(arguments: OutboxImplementation.allCases)
    func aFailureIsRetriedAndThenDelivered(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let entry = try await store.enqueue(Self.message("m", claimedBy: "a"), now: 100)
        var delivery = entry.delivery
        _ = delivery.handle(.failed(owner: "a", now: 101), schedule: Self.schedule)
        #expect(try await store.record(entry.id, claimedBy: "a", as: delivery, outcome: .failed(reason: "timeout")))
        #expect(try await store.entry(id: entry.id)?.delivery.state == .pending(dueAt: 106))
        #expect(try await store.claimDue(owner: "a", now: 105, limit: 5).isEmpty)
        let again = try #require(try await store.claimDue(owner: "a", now: 106, limit: 5).first)
        var done = again.delivery
        _ = done.handle(.succeeded(owner: "a"), schedule: Self.schedule)
        #expect(try await store.record(entry.id, claimedBy: "a", as: done, outcome: .delivered(reply: #"{"ok":1}"#)))
        let delivered = try #require(try await store.entry(id: entry.id))
        #expect(delivered.delivery == OutboxDelivery(state: .delivered, attempts: 2))
        #expect(delivered.reply == #"{"ok":1}"# && delivered.lastError == "timeout")
        #expect(try await store.claimDue(owner: "a", now: 10_000, limit: 5).isEmpty)
        #expect(try await store.depth() == 0)
    }

    @Test(arguments: OutboxImplementation.allCases)
    func anExpeditedClaimIsAheadOfScheduleButNeverBesideALiveClaim(_ implementation: OutboxImplementation)
        async throws
    {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let entry = try await store.enqueue(Self.message("m", lease: 10, claimedBy: "a"), now: 100)  // until 110
        #expect(try await store.expedite(entry.id, owner: "b", now: 109) == nil)  // a's lease runs
        #expect(try await store.entry(id: entry.id)?.delivery.state == .claimed(owner: "a", leaseUntil: 110))
        // a's attempt fails: retry due at 105 + 5; b expedites it before then, attempts unchanged.
        var failed = entry.delivery
        _ = failed.handle(.failed(owner: "a", now: 105), schedule: Self.schedule)
        #expect(try await store.record(entry.id, claimedBy: "a", as: failed, outcome: .failed(reason: "down")))
        let expedited = try #require(try await store.expedite(entry.id, owner: "b", now: 106))
        #expect(expedited.delivery == OutboxDelivery(state: .claimed(owner: "b", leaseUntil: 116), attempts: 1))
        #expect(try await store.entry(id: entry.id) == expedited)
        #expect(try await store.expedite(entry.id, owner: "c", now: 115) == nil)
        #expect(try await store.claimDue(owner: "c", now: 115, limit: 1).isEmpty)
        // b's claim runs out unrecorded: c takes it over, expedited.
        let taken = try #require(try await store.expedite(entry.id, owner: "c", now: 116))
        #expect(taken.delivery.state == .claimed(owner: "c", leaseUntil: 126))
        var done = taken.delivery
        _ = done.handle(.succeeded(owner: "c"), schedule: Self.schedule)
        #expect(try await store.record(entry.id, claimedBy: "c", as: done, outcome: .delivered(reply: "{}")))
        #expect(try await store.expedite(entry.id, owner: "d", now: 200) == nil)  // delivered
        #expect(try await store.expedite(999, owner: "d", now: 200) == nil)
    }

    @Test(arguments: OutboxImplementation.allCases)
    func onlyADeadEntryIsRequeued(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let entry = try await store.enqueue(Self.message("m", claimedBy: "a"), now: 100)
        #expect(try await store.requeue(entry.id, now: 150) == nil)  // claimed
        var dead = OutboxDelivery(state: .claimed(owner: "a", leaseUntil: 130), attempts: 2)
        _ = dead.handle(.failed(owner: "a", now: 101), schedule: Self.schedule)
        #expect(dead.state == .dead)
        #expect(try await store.record(entry.id, claimedBy: "a", as: dead, outcome: .failed(reason: "gone")))
        let requeued = try #require(try await store.requeue(entry.id, now: 200))
        #expect(requeued.delivery == OutboxDelivery(state: .pending(dueAt: 200), attempts: 0))
        #expect(requeued.lastError == "gone")
        #expect(try await store.entry(id: entry.id) == requeued)
        #expect(try await store.requeue(entry.id, now: 201) == nil)  // pending now
        #expect(try await store.requeue(999, now: 201) == nil)
        #expect(try await store.claimDue(owner: "b", now: 200, limit: 1).map(\.id) == [entry.id])
    }

    @Test(arguments: OutboxImplementation.allCases)
    func listingFiltersByPhaseNewestFirstInPages(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        var ids: [Int64] = []
        for index in 0..<5 { ids.append(try await store.enqueue(Self.message("m\(index)"), now: 100).id) }
        let claimed = try #require(try await store.claimDue(owner: "a", now: 100, limit: 1).first)
        #expect(claimed.id == ids[0])
        #expect(try await store.list([.pending], before: nil, limit: 10).map(\.id) == Array(ids[1...].reversed()))
        #expect(try await store.list([.pending, .claimed], before: nil, limit: 10).map(\.id) == ids.reversed())
        #expect(try await store.list([.pending, .claimed], before: nil, limit: 2).map(\.id) == [ids[4], ids[3]])
        #expect(try await store.list([.pending, .claimed], before: ids[3], limit: 2).map(\.id) == [ids[2], ids[1]])
        #expect(try await store.list([.dead, .delivered], before: nil, limit: 10).isEmpty)
        #expect(try await store.list([], before: nil, limit: 10).isEmpty)
        #expect(try await store.list([.pending], before: nil, limit: 0).isEmpty)
        #expect(try await store.depth() == 5)
    }
    @Test(arguments: OutboxImplementation.allCases)
    func anAbandonedAttemptIsDeadAndCountsAreByPhase(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        let entry = try await store.enqueue(Self.message("m", claimedBy: "a"), now: 100)
        _ = try await store.enqueue(Self.message("later"), now: 100)
        _ = try await store.enqueue(OutboxMessage(payload: "delayed", leaseSeconds: 30, delaySeconds: 50), now: 100)
        var delivery = entry.delivery
        #expect(delivery.handle(.abandoned(owner: "a"), schedule: Self.schedule) == .record)
        #expect(try await store.record(entry.id, claimedBy: "a", as: delivery, outcome: .abandoned(reason: "410")))
        let dead = try #require(try await store.entry(id: entry.id))
        #expect(dead.delivery == OutboxDelivery(state: .dead, attempts: 1) && dead.lastError == "410")
        #expect(try await store.count([.dead]) == 1)
        #expect(try await store.count([.pending, .claimed]) == 2)
        #expect(try await store.count([]) == 0)
        #expect(try await store.claimDue(owner: "b", now: 149, limit: 10).map(\.payload) == ["later"])
        #expect(try await store.claimDue(owner: "b", now: 150, limit: 10).map(\.payload) == ["delayed"])
    }
}

/// The SQLite implementation beyond the contract: several connections over one file (several
/// processes), and entries written inside a host's transaction.
@Suite("SQLiteOutbox")
struct SQLiteOutboxTests {
    @Test func twoProcessesClaimingAtOnceNeverShareAnEntry() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let one = SQLiteOutbox(table: TestDatabase.table, access: try TestDatabase(path: directory.databasePath))
        let two = SQLiteOutbox(table: TestDatabase.table, access: try TestDatabase(path: directory.databasePath))
        for index in 0..<200 { _ = try await one.enqueue(OutboxMessage(payload: "m\(index)", leaseSeconds: 30), now: 100) }
        async let first = Self.drain(one, owner: "one")
        async let second = Self.drain(two, owner: "two")
        let (a, b) = try await (first, second)
        #expect(Set(a).isDisjoint(with: Set(b)))
        #expect(a.count + b.count == 200)
        #expect(Set(a + b).count == 200)
    }

    /// Claims one at a time until nothing is due; the ids claimed.
    static func drain(_ store: SQLiteOutbox, owner: String) async throws -> [Int64] {
        var ids: [Int64] = []
        for _ in 0..<1000 {
            guard let entry = try await store.claimDue(owner: owner, now: 100, limit: 1).first else { break }
            ids.append(entry.id)
        }
        return ids
    }

    @Test func anEntryInsertedInAHostTransactionGoesWithIt() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let database = try TestDatabase(path: directory.databasePath)
        let store = SQLiteOutbox(table: TestDatabase.table, access: database)
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await database.perform { connection in
                try connection.transaction {
                    _ = try SQLiteOutbox.insert(
                        OutboxMessage(payload: "rolled back", leaseSeconds: 5), now: 1, into: TestDatabase.table, in: connection)
                    throw Abort()
                }
            }
        }
        #expect(try await store.depth() == 0)
        let kept = try await database.perform { connection in
            try connection.transaction {
                try SQLiteOutbox.insert(
                    OutboxMessage(payload: "kept", leaseSeconds: 5, claimedBy: "host"), now: 1, into: TestDatabase.table,
                    in: connection)
            }
        }
        #expect(try await store.entry(id: kept.id) == kept)
        #expect(kept.delivery.state == .claimed(owner: "host", leaseUntil: 6))
    }

    @Test func anInconsistentRowIsAnErrorNotAGuess() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let database = try TestDatabase(path: directory.databasePath)
        // The table's CHECKs refuse a claimed row without an owner.
        await #expect(throws: SQLiteError.self) {
            try await database.perform { connection in
                try connection.run(
                    """
                    INSERT INTO \(TestDatabase.table) (payload, lease_seconds, state, available_at, owner, attempts, created_at)
                    VALUES ('x', 5, 'claimed', 10, NULL, 1, 1)
                    """)
            }
        }
    }

}
