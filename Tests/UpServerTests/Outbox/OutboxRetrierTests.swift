import Basics
import Foundation
import Outbox
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// The callback outbox of up-server end to end below HTTP: `CallbackOutbox` (the storing
/// request's attempt) and `OutboxRetrier` (the background one) over the index's outbox. The
/// machine's own rules are `OutboxDeliveryTests` and `OutboxWorkerTests` (Outbox module).
@Suite("OutboxRetrier")
struct OutboxRetrierTests {
    static let t0: Int64 = 1_900_000_000
    let logs = LogSink.memory()
    let metrics = Metrics()
    let clock = ManualClock(Double(Self.t0))

    /// One retrier pass with the clock at `time`.
    func pass(_ retrier: OutboxRetrier, at time: Int64) async -> Int {
        clock.set(Double(time))
        return await retrier.runOnce()
    }

    /// The storing request's attempt with the clock at `time`.
    func attemptNow(_ outbox: CallbackOutbox, _ entry: OutboxEntry, at time: Int64) async -> CallbackOutcome {
        clock.set(Double(time))
        return await outbox.attemptNow(entry)
    }

    func outbox(
        _ store: any OutboxStore, _ callbacks: ScriptedCallbacks, owner: String = "up-test", maxRetries: Int = 12
    ) -> CallbackOutbox {
        CallbackOutbox(
            store: store, deliverer: callbacks,
            settings: .init(timeoutSeconds: 5, maxRetries: maxRetries, retryBaseDelaySeconds: 5, retryMaxDelaySeconds: 3600),
            owner: owner, clock: clock, metrics: UpMetrics(metrics), logger: Logger(label: "test", sink: logs))
    }

    func retrier(_ outbox: CallbackOutbox) -> OutboxRetrier {
        OutboxRetrier(outbox: outbox)
    }

    /// Stores an object with its callback born claimed by `outbox`'s process, as the committer does.
    func enqueue(_ objects: any ObjectIndex, _ outbox: CallbackOutbox, key: String = "k") async throws -> OutboxEntry {
        try await CallbackFixtures.store(objects, key: key, now: Self.t0, outbox: outbox)
    }

    @Test("a failing callback is retried with growing delays and delivered once the target recovers, across a restart")
    func retriesThenDelivers() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        var index = try SQLiteUpIndex(dataDirectory: directory.url)
        let callbacks = ScriptedCallbacks()
        callbacks.script(.failed(reason: "status 503"), .failed(reason: "status 503"), .failed(reason: "status 503"))
        var up = outbox(index.outbox, callbacks)
        let entry = try await enqueue(index, up)
        // The storing request's attempt fails → retry in 5 s.
        #expect(await attemptNow(up, entry, at: Self.t0) == .failed(reason: "status 503"))
        var sut = retrier(up)
        #expect(await pass(sut, at: Self.t0 + 4) == 0)  // not due yet
        #expect(await pass(sut, at: Self.t0 + 5) == 1)  // attempt 2 fails → +10 s
        #expect(try await index.outbox.entry(id: entry.id)?.delivery.state == .pending(dueAt: Self.t0 + 15))
        #expect(await pass(sut, at: Self.t0 + 14) == 0)
        #expect(await pass(sut, at: Self.t0 + 15) == 1)  // attempt 3 fails → +20 s
        let pending = try #require(try await index.outbox.entry(id: entry.id))
        #expect(pending.delivery == OutboxDelivery(state: .pending(dueAt: Self.t0 + 35), attempts: 3))
        #expect(pending.lastError == "status 503")
        #expect(metrics.value("upgate_up_outbox_depth") == 1)

        // Restart: a new index over the same file, a new process; the target is back.
        index = try SQLiteUpIndex(dataDirectory: directory.url)
        up = outbox(index.outbox, callbacks, owner: "up-restarted")
        sut = retrier(up)
        #expect(await pass(sut, at: Self.t0 + 35) == 1)
        let delivered = try #require(try await index.outbox.entry(id: entry.id))
        #expect(delivered.delivery == OutboxDelivery(state: .delivered, attempts: 4) && delivered.reply == #"{"ok":true}"#)
        #expect(callbacks.sent.count == 4 && callbacks.sent.allSatisfy { $0.body == "key=k" })
        #expect(metrics.value("upgate_up_outbox_depth") == 0)
        #expect(metrics.value("upgate_up_callback_attempts_total") == 4)
        #expect(metrics.value("upgate_up_callback_failures_total") == 3)
        #expect(await pass(sut, at: Self.t0 + 10_000) == 0)
    }

    @Test("gives up after maxRetries background attempts: dead, listed as dead, and requeueable")
    func givesUp() async throws {
        let index = InMemoryUpIndex()
        let callbacks = ScriptedCallbacks()
        callbacks.script(.failed(reason: "a"), .failed(reason: "b"), .failed(reason: "c"))
        let up = outbox(index.outbox, callbacks, maxRetries: 2)
        let entry = try await enqueue(index, up)
        _ = await attemptNow(up, entry, at: Self.t0)        // attempt 1 → retry in 5 s
        let sut = retrier(up)
        #expect(await pass(sut, at: Self.t0 + 5) == 1)   // attempt 2 → retry in 10 s
        #expect(await pass(sut, at: Self.t0 + 15) == 1)  // attempt 3: maxRetries used up
        let dead = try #require(try await index.outbox.entry(id: entry.id))
        #expect(dead.delivery == OutboxDelivery(state: .dead, attempts: 3) && dead.lastError == "c")
        #expect(await pass(sut, at: Self.t0 + 100_000) == 0)
        #expect(try await index.outbox.list([.dead], before: nil, limit: 10).map(\.id) == [entry.id])
        #expect(logs.capturedLines.contains { $0.contains("failed for good") && $0.contains(#""key":"k""#) })
        clock.set(Double(Self.t0 + 200_000))
        #expect(try await up.worker.requeue(entry.id) != nil)
        #expect(await pass(sut, at: Self.t0 + 200_000) == 1)
        #expect(try await index.outbox.entry(id: entry.id)?.delivery.state == .delivered)
    }

    @Test("a callback whose storing process died mid-attempt is delivered once its claim's lease runs out")
    func aLostSynchronousAttemptIsTakenOver() async throws {
        let index = InMemoryUpIndex()
        let callbacks = ScriptedCallbacks()
        let crashed = outbox(index.outbox, callbacks, owner: "up-crashed")
        let entry = try await enqueue(index, crashed)  // born claimed; its attempt never happens
        #expect(entry.leaseSeconds == 10)              // 5 s timeout × 1 URL + 5 s
        let sut = retrier(outbox(index.outbox, callbacks, owner: "up-other"))
        #expect(await pass(sut, at: Self.t0 + 9) == 0)
        #expect(callbacks.sent.isEmpty)
        #expect(await pass(sut, at: Self.t0 + 10) == 1)
        #expect(try await index.outbox.entry(id: entry.id)?.delivery == OutboxDelivery(state: .delivered, attempts: 2))
    }

    @Test("the background loop runs passes until stopped")
    func backgroundLoop() async throws {
        let index = InMemoryUpIndex()
        let callbacks = ScriptedCallbacks()
        let up = outbox(index.outbox, callbacks)
        let entry = try await enqueue(index, up)
        clock.set(Double(Self.t0 + 10))
        let sut = OutboxRetrier(outbox: up)
        sut.start(every: .milliseconds(20))
        for _ in 0..<200 where try await index.outbox.entry(id: entry.id)?.delivery.state != .delivered {
            try await Task.sleep(for: .milliseconds(10))
        }
        await sut.stop()
        #expect(try await index.outbox.entry(id: entry.id)?.delivery.state == .delivered)
        #expect(callbacks.sent.count == 1)
    }

    /// Issue 5's disk-full suite: an outcome that cannot be recorded leaves the entry claimed
    /// (never lost, never marked). A failed attempt is tried again once the lease has run out; a
    /// delivery is remembered and recorded once space is back, without going out again.
    @Test("with the disk full an unrecordable attempt leaves the entry claimed; a delivery is recorded once space is back")
    func aFullDiskLosesNoCallback() async throws {
        let index = FullDiskIndex()
        let callbacks = ScriptedCallbacks()
        callbacks.script(.failed(reason: "status 503"))  // then delivered
        let up = outbox(index.outbox, callbacks)
        let entry = try await enqueue(index, up)
        index.refuse([.recordOutcome])
        #expect(await attemptNow(up, entry, at: Self.t0) == .failed(reason: "status 503"))
        let sut = retrier(up)
        #expect(await pass(sut, at: Self.t0 + 9) == 0)   // still claimed
        #expect(await pass(sut, at: Self.t0 + 10) == 1)  // lease ran out: delivered, not recordable
        let stuck = try #require(try await index.outbox.entry(id: entry.id))
        #expect(stuck.delivery == OutboxDelivery(state: .claimed(owner: "up-test", leaseUntil: Self.t0 + 20), attempts: 2))
        #expect(index.refused == 2)
        #expect(logs.capturedLines.filter { $0.contains("outbox: cannot record attempt") }.count == 2)

        index.refuse([])
        #expect(await pass(sut, at: Self.t0 + 20) == 0)  // records the delivery, sends nothing
        let delivered = try #require(try await index.outbox.entry(id: entry.id))
        #expect(delivered.delivery == OutboxDelivery(state: .delivered, attempts: 2))
        #expect(callbacks.sent.count == 2 && callbacks.sent.allSatisfy { $0.body == "key=k" })
        #expect(await pass(sut, at: Self.t0 + 10_000) == 0)
    }

    /// Callbacks that answer `reply` only once the returned gate lets them go.
    func heldCallbacks(replying reply: String) -> (Gate, ScriptedCallbacks) {
        let gate = Gate()
        let callbacks = ScriptedCallbacks(holdingAt: gate)
        callbacks.script(.delivered(reply: Array(reply.utf8)))
        return (gate, callbacks)
    }

    /// Starts `first`, an attempt of `entry` that `gate` holds once its callback is out, asks
    /// for the entry's outcome as a repeated mkfile would while it is held, then lets it go.
    ///
    /// - Returns: The repeat's outcome.
    func repeatWhileHeld(
        _ up: CallbackOutbox, _ entry: OutboxEntry, gate: Gate, first: @escaping @Sendable () async -> Void
    ) async throws -> CallbackOutcome? {
        let attempt = Task { await first() }
        #expect(await gate.waitForArrivals(1))  // the first attempt's callback is out
        let repeated = Task { try await up.outcomeForRepeat(of: entry.id) }
        try await Task.sleep(for: .milliseconds(500))  // the repeat polls meanwhile
        gate.open()
        await attempt.value
        return try await repeated.value
    }

    /// scripts/chaos/server-crash (CI, a callback delivered twice): after a restart the retrier
    /// took over the dead process's entry and was delivering it when the client's repeated
    /// mkfile asked for the entry's outcome; the repeat saw this process's own claim, took it
    /// for an outcome that could not be recorded, and sent the callback a second time.
    @Test("a repeat asking while the retrier delivers the same callback waits for that delivery, never sends again")
    func aRepeatWaitsForTheRetriersAttempt() async throws {
        let index = InMemoryUpIndex()
        let (gate, callbacks) = heldCallbacks(replying: #"{"record":1}"#)
        let entry = try await enqueue(index, outbox(index.outbox, ScriptedCallbacks(), owner: "up-crashed"))  // died mid-attempt
        let up = outbox(index.outbox, callbacks)
        clock.set(Double(Self.t0 + entry.leaseSeconds))
        let retrier = retrier(up)
        let outcome = try await repeatWhileHeld(up, entry, gate: gate) { await retrier.runOnce() }
        #expect(outcome == .delivered(reply: Array(#"{"record":1}"#.utf8)))
        #expect(callbacks.sent.count == 1)
    }

    @Test("a repeat asking while the storing request's attempt is out waits for it and relays its reply")
    func aRepeatWaitsForTheStoringRequestsAttempt() async throws {
        let index = InMemoryUpIndex()
        let (gate, callbacks) = heldCallbacks(replying: #"{"record":2}"#)
        let up = outbox(index.outbox, callbacks)
        let entry = try await enqueue(index, up)
        let outcome = try await repeatWhileHeld(up, entry, gate: gate) { _ = await up.attemptNow(entry) }
        #expect(outcome == .delivered(reply: Array(#"{"record":2}"#.utf8)))
        #expect(callbacks.sent.count == 1)
    }

    /// Issue 12 runs several up-servers on one index: the claim, not a grace period, keeps their
    /// retriers from sending one callback twice.
    @Test("two processes sharing one index deliver every callback once")
    func twoProcessesShareTheOutbox() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let first = try SQLiteUpIndex(dataDirectory: directory.url)
        let second = try SQLiteUpIndex(dataDirectory: directory.url)
        for index in 0..<30 {
            _ = try await CallbackFixtures.store(first, key: "k\(index)", now: Self.t0)  // pending: its creator died
        }
        let (oneCallbacks, twoCallbacks) = (ScriptedCallbacks(), ScriptedCallbacks())
        let one = retrier(outbox(first.outbox, oneCallbacks, owner: "up-one"))
        let two = retrier(outbox(second.outbox, twoCallbacks, owner: "up-two"))
        clock.set(Double(Self.t0))
        async let a = one.runOnce()
        async let b = two.runOnce()
        let attempted = await a + b
        let bodies = (oneCallbacks.sent + twoCallbacks.sent).map(\.body)
        #expect(attempted == 30 && bodies.count == 30 && Set(bodies).count == 30)
        #expect(try await first.outbox.list([.delivered], before: nil, limit: 100).count == 30)
    }
}
