import NativeOS
import Testing

@Suite("BlockingExecutor")
struct BlockingExecutorTests {
    struct Failure: Error, Equatable {}

    @Test func runReturnsTheResultAndRethrowsTheError() async throws {
        #expect(try await BlockingExecutor.shared.run { 6 * 7 } == 42)
        await #expect(throws: Failure.self) { try await BlockingExecutor.shared.run { throw Failure() } }
    }

    /// A non-Sendable counter updated from 200 concurrent tasks: confined to its serial queue,
    /// no update is lost.
    @Test func aResourceIsUsedOneCallAtATime() async throws {
        final class Counter { var value = 0; var inside = 0; var overlaps = 0 }
        let resource = BlockingResource(Counter())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await resource.use { counter in
                        counter.inside += 1
                        if counter.inside > 1 { counter.overlaps += 1 }
                        counter.value += 1
                        counter.inside -= 1
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await resource.use { $0.value } == 200)
        #expect(try await resource.use { $0.overlaps } == 0)
    }
}
