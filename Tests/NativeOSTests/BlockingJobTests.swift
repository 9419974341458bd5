import Dispatch
import NativeOS
import Testing

@Suite("BlockingJob")
struct BlockingJobTests {
    struct Failure: Error, Equatable {}

    /// The job starts at once, with nobody waiting: it has run before `value()` is asked for,
    /// which then hands over its result.
    @Test func aJobRunsWithoutBeingAwaitedAndItsResultWaits() async throws {
        let ran = DispatchSemaphore(value: 0)
        let job = BlockingExecutor.shared.start { () -> Int in
            ran.signal()
            return 42
        }
        #expect(ran.wait(timeout: .now() + 5) == .success)
        try await Task.sleep(for: .milliseconds(20))  // past the job's own end
        #expect(try await job.value() == 42)
    }

    /// `value()` asked for while the job still runs waits for it.
    @Test func valueWaitsForAJobStillRunning() async throws {
        let gate = DispatchSemaphore(value: 0)
        let job = BlockingExecutor.shared.start { () -> String in
            _ = gate.wait(timeout: .now() + 5)
            return "done"
        }
        let opener = Task {
            try await Task.sleep(for: .milliseconds(50))
            gate.signal()
        }
        #expect(try await job.value() == "done")
        try await opener.value
    }

    @Test func anErrorComesBackFromValueEitherWay() async throws {
        let early = BlockingExecutor.shared.start { () throws -> Int in throw Failure() }
        try await Task.sleep(for: .milliseconds(20))
        await #expect(throws: Failure.self) { try await early.value() }
        let gate = DispatchSemaphore(value: 0)
        let late = BlockingExecutor.shared.start { () throws -> Int in
            _ = gate.wait(timeout: .now() + 5)
            throw Failure()
        }
        Task { gate.signal() }
        await #expect(throws: Failure.self) { try await late.value() }
    }
}
