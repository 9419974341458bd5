import Basics
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// The background sweep as up-server runs it: expired blocks go from the index, then from disk.
/// Issue 5's disk-full suite left it unexercised while the disk was full; SQLite needs space to
/// delete too, so a pass can fail exactly when space is short.
@Suite("SweeperTask")
struct SweeperTaskTests {
    let logs = LogSink.memory()

    func task(_ index: any SweepIndex, _ store: any BlockStore) -> SweeperTask {
        SweeperTask(
            sweeper: Sweeper(index: index, store: store), metrics: UpMetrics(Metrics()),
            logger: Logger(label: "test", sink: logs), clock: ManualClock(1_000))
    }

    @Test("a pass the full index refuses removes nothing and is logged; the next pass after space returns sweeps")
    func aRefusedPassLosesNothingAndTheNextOneSweeps() async throws {
        let index = FullDiskIndex()
        let store = InMemoryBlockStore()
        let (expired, live) = (try store.create(), try store.create())
        _ = try store.append([1, 2, 3], to: expired, at: 0)
        _ = try store.append([4, 5, 6], to: live, at: 0)
        _ = try await index.createBlock(expired, blockSize: 4, expiresAt: 500, createdAt: 1)
        _ = try await index.createBlock(live, blockSize: 4, expiresAt: 5_000, createdAt: 1)
        let sut = task(index, store)

        index.refuse([.sweepExpired])
        #expect(await sut.runOnce(now: 1_000) == nil)
        #expect(try await index.block(expired) != nil)
        #expect(Set(try store.list()) == [expired, live])
        #expect(logs.capturedLines.contains { $0.contains("sweep failed") && $0.contains("insufficient_storage") })

        index.refuse([])
        #expect(await sut.runOnce(now: 1_000) == SweepReport(blocks: 1))
        #expect(try await index.block(expired) == nil)
        #expect(try store.list() == [live])
        #expect(try await index.block(live) != nil)
    }
}
