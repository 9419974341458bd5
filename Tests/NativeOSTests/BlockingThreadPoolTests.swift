import Foundation
import NativeOS
import Synchronization
import Testing

@Suite("BlockingThreadPool")
struct BlockingThreadPoolTests {
    /// Blocking work needs as many threads as jobs blocked at once: 32 jobs that each wait for
    /// all 32 to have started only finish if the pool runs them side by side right away (on
    /// corelibs-libdispatch, which adds about one thread a second, they time out).
    @Test func blockedJobsEachGetAThreadAtOnce() async throws {
        let pool = BlockingThreadPool(name: "test-barrier")
        let barrier = Barrier(parties: 32)
        let met = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<32 {
                group.addTask { try await BlockingExecutor(concurrent: true, pool: pool).run { barrier.arriveAndWait(seconds: 5) } }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(met == 32)
    }

    /// The bound holds: with 4 threads at most, no more than 4 jobs ever run at once, and the rest
    /// still run as threads free up.
    @Test func neverMoreThreadsThanTheBound() async throws {
        let pool = BlockingThreadPool(name: "test-bound", maximumThreads: 4)
        let counts = Counts()
        let executor = BlockingExecutor(concurrent: true, pool: pool)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await executor.run {
                        counts.enter()
                        usleep(2_000)
                        counts.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(counts.peak <= 4)
        #expect(counts.total == 40)
        #expect(pool.threadCount <= 4)
    }

    /// Idle threads end after the timeout, and the pool starts new ones for later work.
    @Test func idleThreadsEndAndComeBack() async throws {
        let pool = BlockingThreadPool(name: "test-idle", idleTimeout: 0.05)
        let executor = BlockingExecutor(concurrent: true, pool: pool)
        #expect(try await executor.run { 1 } == 1)
        #expect(pool.threadCount <= 1)
        var waited = 0
        while pool.threadCount > 0 && waited < 200 { try await Task.sleep(for: .milliseconds(10)); waited += 1 }
        #expect(pool.threadCount == 0)
        #expect(try await executor.run { 2 } == 2)
    }

    /// A serial executor on a pool of many threads still runs one job at a time.
    @Test func aSerialExecutorRunsOneJobAtATimeOnAWidePool() async throws {
        let pool = BlockingThreadPool(name: "test-serial")
        let executor = BlockingExecutor(pool: pool)
        let counts = Counts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<300 {
                group.addTask { try await executor.run { counts.enter(); counts.leave() } }
            }
            try await group.waitForAll()
        }
        #expect(counts.peak == 1)
        #expect(counts.total == 300)
    }
}

/// How many jobs ran, and the most that ran at once.
private final class Counts: Sendable {
    private struct State { var inside = 0, peak = 0, total = 0 }
    private let state = Mutex(State())

    func enter() { state.withLock { $0.inside += 1; $0.total += 1; $0.peak = max($0.peak, $0.inside) } }
    func leave() { state.withLock { $0.inside -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
    var total: Int { state.withLock { $0.total } }
}

/// Threads meet here: each waits until `parties` have arrived or `seconds` have passed.
private final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrived = 0
    private let parties: Int

    init(parties: Int) { self.parties = parties }

    /// Whether all parties arrived in time.
    func arriveAndWait(seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while arrived < parties {
            if !condition.wait(until: deadline) { return arrived >= parties }
        }
        return true
    }
}
