import Basics
import Outbox
import Synchronization
import TestSupport
import Testing

/// A sender that records what it was asked to send and answers from a script (default: delivered).
final class ScriptedSender: OutboxSender {
    private let state = Mutex<(sent: [OutboxEntry], script: [OutboxOutcome])>(([], []))

    func script(_ outcomes: OutboxOutcome...) { state.withLock { $0.script += outcomes } }

    var sent: [OutboxEntry] { state.withLock { $0.sent } }

    func send(_ entry: OutboxEntry) async -> OutboxOutcome {
        state.withLock { state in
            state.sent.append(entry)
            return state.script.isEmpty ? .delivered(reply: "ok") : state.script.removeFirst()
        }
    }
}

/// A store whose `record` fails (a full disk) while `failing` is set.
final class UnrecordableOutbox: OutboxStore {
    let base = InMemoryOutbox()
    let failing = Atomic<Bool>(false)
    struct DiskFull: Error {}

    func enqueue(_ message: OutboxMessage, now: Int64) async throws -> OutboxEntry { base.insert(message, now: now) }
    func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry] {
        try await base.claimDue(owner: owner, now: now, limit: limit)
    }
    func expedite(_ id: Int64, owner: String, now: Int64) async throws -> OutboxEntry? {
        try await base.expedite(id, owner: owner, now: now)
    }
    func record(_ id: Int64, claimedBy owner: String, as delivery: OutboxDelivery, outcome: OutboxOutcome) async throws -> Bool {
        if failing.load(ordering: .relaxed) { throw DiskFull() }
        return try await base.record(id, claimedBy: owner, as: delivery, outcome: outcome)
    }
    func requeue(_ id: Int64, now: Int64) async throws -> OutboxEntry? { try await base.requeue(id, now: now) }
    func entry(id: Int64) async throws -> OutboxEntry? { try await base.entry(id: id) }
    func list(_ phases: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry] {
        try await base.list(phases, before: before, limit: limit)
    }
    func depth() async throws -> Int { try await base.depth() }
}

@Suite("OutboxWorker")
struct OutboxWorkerTests {
    static let schedule = OutboxDelivery.Schedule(maxAttempts: 3, firstDelay: 5, maxDelay: 60)
    let logs = LogSink.memory()
    let clock = ManualClock(0)

    /// One pass of `worker` with the clock at `time`.
    func run(_ worker: OutboxWorker, at time: Int64, limit: Int = 32) async -> Int {
        clock.set(Double(time))
        return await worker.runOnce(limit: limit)
    }

    /// `worker`'s attempt of `entry` with the clock at `time`.
    func attempt(_ worker: OutboxWorker, _ entry: OutboxEntry, at time: Int64) async -> OutboxOutcome {
        clock.set(Double(time))
        return await worker.attempt(entry)
    }

    func worker(_ owner: String, _ store: any OutboxStore, _ sender: ScriptedSender, metrics: Metrics = Metrics()) -> OutboxWorker {
        OutboxWorker(
            owner: owner, store: store, sender: sender, schedule: Self.schedule, clock: clock,
            metrics: .init(
                attempts: metrics.counter("attempts", "a"), failures: metrics.counter("failures", "f"),
                depth: metrics.gauge("depth", "d")),
            logger: Logger(label: "test", sink: logs), describe: { [("payload", .string($0.payload))] })
    }

    @Test func retriesOnTheScheduleAndGivesUpAfterTheLastAttempt() async throws {
        let store = InMemoryOutbox()
        let sender = ScriptedSender()
        sender.script(.failed(reason: "503"), .failed(reason: "503"), .failed(reason: "timeout"))
        let metrics = Metrics()
        let sut = worker("me", store, sender, metrics: metrics)
        let entry = store.insert(OutboxMessage(payload: "m", leaseSeconds: 30), now: 100)
        #expect(await run(sut, at: 100) == 1)  // attempt 1 → due at 105
        #expect(await run(sut, at: 104) == 0)
        #expect(await run(sut, at: 105) == 1)  // attempt 2 → due at 115
        #expect(try await store.entry(id: entry.id)?.delivery.state == .pending(dueAt: 115))
        #expect(metrics.value("depth") == 1)
        #expect(await run(sut, at: 115) == 1)  // attempt 3, the last → dead
        let dead = try #require(try await store.entry(id: entry.id))
        #expect(dead.delivery == OutboxDelivery(state: .dead, attempts: 3) && dead.lastError == "timeout")
        #expect(await run(sut, at: 100_000) == 0)
        #expect(sender.sent.count == 3)
        #expect(metrics.value("attempts") == 3 && metrics.value("failures") == 3 && metrics.value("depth") == 0)
        #expect(logs.capturedLines.contains { $0.contains("outbox: failed for good") && $0.contains(#""payload":"m""#) })

        // Requeued, it gets a fresh schedule and is delivered.
        clock.set(200)
        #expect(try await sut.requeue(entry.id)?.delivery.state == .pending(dueAt: 200))
        #expect(await run(sut, at: 200) == 1)
        let delivered = try #require(try await store.entry(id: entry.id))
        #expect(delivered.delivery == OutboxDelivery(state: .delivered, attempts: 1) && delivered.reply == "ok")
    }

    @Test(arguments: OutboxImplementation.allCases)
    func twoWorkersSharingAStoreSendEveryEntryOnce(_ implementation: OutboxImplementation) async throws {
        let (store, cleanup) = try await implementation.make()
        defer { cleanup() }
        for index in 0..<40 { _ = try await store.enqueue(OutboxMessage(payload: "m\(index)", leaseSeconds: 30), now: 100) }
        let sender = ScriptedSender()
        let one = worker("one", store, sender)
        let two = worker("two", store, sender)
        clock.set(100)
        async let a = one.runOnce(limit: 100)
        async let b = two.runOnce(limit: 100)
        let (sentByOne, sentByTwo) = await (a, b)
        #expect(sentByOne + sentByTwo == 40)
        #expect(sender.sent.count == 40)
        #expect(Set(sender.sent.map(\.id)).count == 40)
        #expect(try await store.list([.delivered], before: nil, limit: 100).count == 40)
    }

    @Test func anEntryBornClaimedIsLeftToItsCreatorUntilTheLeaseRunsOut() async throws {
        let store = InMemoryOutbox()
        let sender = ScriptedSender()
        let other = worker("other", store, sender)
        // The creator claimed it for its synchronous attempt, then died before recording.
        let entry = store.insert(OutboxMessage(payload: "m", leaseSeconds: 10, claimedBy: "creator"), now: 100)
        #expect(await run(other, at: 109) == 0)
        #expect(sender.sent.isEmpty)
        #expect(await run(other, at: 110) == 1)  // the lease ran out: taken over
        #expect(try await store.entry(id: entry.id)?.delivery == OutboxDelivery(state: .delivered, attempts: 2))
    }

    @Test func theCreatorsSynchronousAttemptIsRecordedByTheSameRules() async throws {
        let store = InMemoryOutbox()
        let sender = ScriptedSender()
        sender.script(.failed(reason: "status 500"))
        let creator = worker("creator", store, sender)
        let entry = store.insert(OutboxMessage(payload: "m", leaseSeconds: 10, claimedBy: "creator"), now: 100)
        #expect(await attempt(creator, entry, at: 101) == .failed(reason: "status 500"))
        #expect(try await store.entry(id: entry.id)?.delivery == OutboxDelivery(state: .pending(dueAt: 106), attempts: 1))
    }

    @Test func aSlowOwnerWhoseClaimWasTakenOverRecordsNothing() async throws {
        let store = InMemoryOutbox()
        let sender = ScriptedSender()
        let slow = worker("slow", store, sender)
        let fast = worker("fast", store, sender)
        let entry = store.insert(OutboxMessage(payload: "m", leaseSeconds: 10, claimedBy: "slow"), now: 100)
        sender.script(.failed(reason: "status 503"))
        #expect(await run(fast, at: 110) == 1)  // takes over (attempt 2), fails: due at 120
        // The slow owner's attempt finally ends, successfully; the claim is not its own any more.
        #expect(await attempt(slow, entry, at: 111) == .delivered(reply: "ok"))
        #expect(try await store.entry(id: entry.id)?.delivery == OutboxDelivery(state: .pending(dueAt: 120), attempts: 2))
        #expect(logs.capturedLines.contains { $0.contains("lease lost before the outcome was recorded") })
    }

    /// One entry (lease 10 s) attempted by worker "me" at 100 while its store refuses to record
    /// outcomes; `outcome` is what the receiver answers.
    func attemptedWhileUnrecordable(
        _ outcome: OutboxOutcome = .delivered(reply: "ok")
    ) async -> (UnrecordableOutbox, ScriptedSender, OutboxWorker, OutboxEntry) {
        let store = UnrecordableOutbox()
        let sender = ScriptedSender()
        sender.script(outcome)
        let sut = worker("me", store, sender)
        let entry = store.base.insert(OutboxMessage(payload: "m", leaseSeconds: 10), now: 100)
        store.failing.store(true, ordering: .relaxed)
        #expect(await run(sut, at: 100) == 1)
        return (store, sender, sut, entry)
    }

    /// A delivery whose outcome the store refused (a full disk) is recorded by the next pass,
    /// and never sent again by this process.
    @Test func aDeliveryThatCannotBeRecordedIsRecordedLaterNotSentAgain() async throws {
        let (store, sender, sut, entry) = await attemptedWhileUnrecordable()
        #expect(try await store.entry(id: entry.id)?.delivery.state == .claimed(owner: "me", leaseUntil: 110))
        #expect(logs.capturedLines.contains { $0.contains("outbox: cannot record attempt") && $0.contains("not sent again") })
        #expect(!logs.capturedLines.contains { $0.contains(#""level":"error""#) })
        store.failing.store(false, ordering: .relaxed)
        #expect(await run(sut, at: 101) == 0)
        #expect(try await store.entry(id: entry.id)?.delivery == OutboxDelivery(state: .delivered, attempts: 1))
        #expect(try await store.entry(id: entry.id)?.reply == "ok")
        #expect(sender.sent.count == 1)
        #expect(logs.capturedLines.contains { $0.contains("outbox: delivered earlier, recorded now") })
    }

    /// Still refused when the lease runs out: the entry is claimed again, and that attempt
    /// records the delivery it remembers instead of sending it again (up-server: an uploader's
    /// repeated request takes the same path).
    @Test func aDeliveryStillUnrecordedAfterTheLeaseIsNotSentAgain() async throws {
        let (store, sender, sut, entry) = await attemptedWhileUnrecordable()
        #expect(await run(sut, at: 110) == 1)  // claimed again (attempt 2), not sent
        #expect(sender.sent.count == 1)
        store.failing.store(false, ordering: .relaxed)
        let again = try #require(try await store.entry(id: entry.id))
        #expect(await attempt(sut, again, at: 111) == .delivered(reply: "ok"))
        #expect(try await store.entry(id: entry.id)?.delivery == OutboxDelivery(state: .delivered, attempts: 2))
        #expect(sender.sent.count == 1)
    }

    /// A failure that cannot be recorded is not remembered: the entry is attempted again once
    /// its lease runs out, as a retry would be.
    @Test func aFailureThatCannotBeRecordedIsAttemptedAgainAfterTheLease() async throws {
        let (store, sender, sut, entry) = await attemptedWhileUnrecordable(.failed(reason: "status 503"))
        store.failing.store(false, ordering: .relaxed)
        #expect(await run(sut, at: 109) == 0)
        #expect(await run(sut, at: 110) == 1)
        #expect(try await store.entry(id: entry.id)?.delivery == OutboxDelivery(state: .delivered, attempts: 2))
        #expect(sender.sent.count == 2)
    }

    @Test func ownerIDsDifferPerProcess() {
        let a = OutboxWorker.makeOwnerID(prefix: "up")
        #expect(a.hasPrefix("up-") && a.utf8.count == 19)
        #expect(a != OutboxWorker.makeOwnerID(prefix: "up"))
    }
}
