import Basics
import Foundation
import Testing
import TestSupport
import UpCore
@testable import UpServer

@Suite("OutboxRetrier")
struct OutboxRetrierTests {
    static let t0: Int64 = 1_900_000_000
    let logs = LogSink.memory()
    let metrics = Metrics()

    func retrier(
        _ index: any UpIndex, _ callbacks: any CallbackDelivering, maxRetries: Int = 12
    ) -> OutboxRetrier {
        OutboxRetrier(
            index: index, callbacks: callbacks,
            settings: .init(timeoutSeconds: 5, maxRetries: maxRetries, retryBaseDelaySeconds: 5, retryMaxDelaySeconds: 3600),
            metrics: UpMetrics(metrics), logger: Logger(label: "test", sink: logs), clock: ManualClock(Double(Self.t0)))
    }

    /// Stores an object with a callback, as the committer does, and records the failed synchronous attempt.
    func enqueue(_ index: any UpIndex, key: String = "k", syncFailed: Bool = true) async throws -> Int64 {
        let object = StoredObject(
            bucket: "demo", key: key, etag: "Fhash", fsize: 0, mimeType: "text/plain", segments: [], putTime: Self.t0)
        let callback = NewOutboxEntry(
            urls: ["http://biz.example/cb"], body: "key=\(key)", contentType: QBoxSignature.formContentType,
            authScheme: "qbox:test-ak", firstAttemptAt: Self.t0)
        guard case .stored(_, _, let id?) = try await index.putObject(object, mode: .replace, completion: nil, callback: callback)
        else { throw UpIndexError.notFound }
        if syncFailed { try await index.markAttemptFailed(id, error: "status 503", nextAttemptAt: Self.t0 + 5) }
        return id
    }

    @Test("a failing callback is retried with growing delays and delivered once the target recovers, across a restart")
    func retriesThenDelivers() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        var index = try SQLiteUpIndex(dataDirectory: directory.url)
        let id = try await enqueue(index)
        let callbacks = ScriptedCallbacks()
        callbacks.script(.failed(reason: "status 503"), .failed(reason: "status 503"))
        var sut = retrier(index, callbacks)

        #expect(await sut.runOnce(now: Self.t0 + 4) == 0)  // not due yet
        #expect(await sut.runOnce(now: Self.t0 + 5) == 1)  // attempt 2 fails → +10 s
        #expect(try await index.outboxEntry(id: id)?.nextAttemptAt == Self.t0 + 15)
        #expect(await sut.runOnce(now: Self.t0 + 14) == 0)
        #expect(await sut.runOnce(now: Self.t0 + 15) == 1)  // attempt 3 fails → +20 s
        let pending = try #require(try await index.outboxEntry(id: id))
        #expect(pending.nextAttemptAt == Self.t0 + 35 && pending.attempts == 3 && pending.state == .pending)
        #expect(pending.lastError == "status 503")
        #expect(metrics.value("upgate_up_outbox_depth") == 1)

        // Restart: a new index over the same file, a new retrier; the target is back.
        index = try SQLiteUpIndex(dataDirectory: directory.url)
        sut = retrier(index, callbacks)
        #expect(await sut.runOnce(now: Self.t0 + 35) == 1)
        let delivered = try #require(try await index.outboxEntry(id: id))
        #expect(delivered.state == .delivered && delivered.reply == #"{"ok":true}"# && delivered.attempts == 4)
        #expect(callbacks.sent.count == 3 && callbacks.sent.allSatisfy { $0.body == "key=k" })
        #expect(metrics.value("upgate_up_outbox_depth") == 0)
        #expect(metrics.value("upgate_up_callback_attempts_total") == 3)
        #expect(await sut.runOnce(now: Self.t0 + 10_000) == 0)
    }

    @Test("gives up after maxRetries background attempts: failed for good, listed as failed")
    func givesUp() async throws {
        let index = InMemoryUpIndex()
        let id = try await enqueue(index)
        let callbacks = ScriptedCallbacks()
        callbacks.script(.failed(reason: "a"), .failed(reason: "b"), .failed(reason: "c"))
        let sut = retrier(index, callbacks, maxRetries: 2)
        #expect(await sut.runOnce(now: Self.t0 + 5) == 1)     // attempt 2 → retry in 10 s
        #expect(await sut.runOnce(now: Self.t0 + 15) == 1)    // attempt 3 → maxRetries used up
        let entry = try #require(try await index.outboxEntry(id: id))
        #expect(entry.state == .failed && entry.attempts == 3 && entry.lastError == "b")
        #expect(await sut.runOnce(now: Self.t0 + 100_000) == 0)
        #expect(try await index.listOutbox(state: .failed, limit: 10).map(\.id) == [id])
        #expect(logs.capturedLines.contains { $0.contains("failed for good") })
    }

    @Test("a fresh entry is left to its synchronous attempt, then picked up if that attempt was lost")
    func freshEntryGrace() async throws {
        let index = InMemoryUpIndex()
        let id = try await enqueue(index, syncFailed: false)
        let callbacks = ScriptedCallbacks()
        let sut = retrier(index, callbacks)
        #expect(await sut.runOnce(now: Self.t0 + 1) == 0)
        #expect(callbacks.sent.isEmpty)
        #expect(await sut.runOnce(now: Self.t0 + 10) == 1)  // 5 s timeout × 1 URL + 5 s margin
        #expect(try await index.outboxEntry(id: id)?.state == .delivered)
    }

    @Test("the background loop runs passes until stopped")
    func backgroundLoop() async throws {
        let index = InMemoryUpIndex()
        let id = try await enqueue(index)
        let clock = ManualClock(Double(Self.t0 + 5))
        let callbacks = ScriptedCallbacks()
        let sut = OutboxRetrier(
            index: index, callbacks: callbacks, settings: .init(), metrics: UpMetrics(metrics),
            logger: Logger(label: "test", sink: logs), clock: clock)
        sut.start(every: .milliseconds(20))
        for _ in 0..<200 where await index.outboxEntry(id: id)?.state != .delivered {
            try await Task.sleep(for: .milliseconds(10))
        }
        await sut.stop()
        #expect(try await index.outboxEntry(id: id)?.state == .delivered)
        #expect(callbacks.sent.count == 1)
    }

    /// Issue 5's disk-full suite left the retrier unexercised while the index cannot write: an
    /// outcome it cannot record must leave the entry pending (never lost, never marked), so the
    /// callback goes out again once space is back; the receiver deduplicates the repeat.
    @Test("with the disk full an unrecordable attempt leaves the entry pending; it is delivered and recorded once space is back")
    func aFullDiskLosesNoCallback() async throws {
        let index = FullDiskIndex()
        let id = try await enqueue(index)
        let callbacks = ScriptedCallbacks()
        callbacks.script(.failed(reason: "status 503"))  // then delivered
        let sut = retrier(index, callbacks)
        index.refuse([.markDelivered, .markAttemptFailed])

        #expect(await sut.runOnce(now: Self.t0 + 5) == 1)  // fails, and the failure cannot be recorded
        #expect(await sut.runOnce(now: Self.t0 + 6) == 1)  // delivered, and that cannot be recorded
        let stuck = try #require(try await index.outboxEntry(id: id))
        #expect(stuck.state == .pending && stuck.attempts == 1 && stuck.nextAttemptAt == Self.t0 + 5)
        #expect(index.refused == 2)
        #expect(logs.capturedLines.filter { $0.contains("outbox: cannot record attempt") }.count == 2)

        index.refuse([])
        #expect(await sut.runOnce(now: Self.t0 + 7) == 1)
        let delivered = try #require(try await index.outboxEntry(id: id))
        #expect(delivered.state == .delivered && delivered.attempts == 2)
        #expect(callbacks.sent.count == 3 && callbacks.sent.allSatisfy { $0.body == "key=k" })
        #expect(await sut.runOnce(now: Self.t0 + 10_000) == 0)
    }
}
