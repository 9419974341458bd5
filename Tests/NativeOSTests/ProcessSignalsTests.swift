import Foundation
import NativeOS
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Signals reach observers in thread context, through the self-pipe; SIGUSR1/SIGUSR2 so the
/// test process's own SIGINT/SIGTERM handling is untouched.
@Suite("ProcessSignals", .serialized)
struct ProcessSignalsTests {
    @Test func everyObserverOfASignalGetsEachDelivery() async throws {
        let (first, firstObservation) = ProcessSignals.stream([ProcessSignal(SIGUSR1)])
        let seen = Mutex<[Int32]>([])
        let second = ProcessSignals.observe([ProcessSignal(SIGUSR1), ProcessSignal(SIGUSR2)]) { signal in
            seen.withLock { $0.append(signal.number) }
        }
        defer { second.cancel() }
        kill(getpid(), SIGUSR1)
        var iterator = first.makeAsyncIterator()
        #expect(await iterator.next() == ProcessSignal(SIGUSR1))
        kill(getpid(), SIGUSR2)
        kill(getpid(), SIGUSR1)
        #expect(await iterator.next() == ProcessSignal(SIGUSR1))
        firstObservation.cancel()
        #expect(await iterator.next() == nil, "cancelling finishes the stream")
        for _ in 0..<500 where seen.withLock({ $0.count }) < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.withLock { $0 }.sorted() == [SIGUSR1, SIGUSR1, SIGUSR2].sorted())
    }

    @Test func aSignalObservedAgainAfterCancellationIsDeliveredAgain() async throws {
        let (stream, observation) = ProcessSignals.stream([ProcessSignal(SIGUSR2)])
        observation.cancel()
        let (again, second) = ProcessSignals.stream([ProcessSignal(SIGUSR2)])
        defer { second.cancel() }
        kill(getpid(), SIGUSR2)
        var iterator = again.makeAsyncIterator()
        #expect(await iterator.next() == ProcessSignal(SIGUSR2))
        var old = stream.makeAsyncIterator()
        #expect(await old.next() == nil)
    }

    @Test func namesAreTheUsualOnes() {
        #expect(ProcessSignal.hangUp.description == "SIGHUP")
        #expect(ProcessSignal.terminate.description == "SIGTERM")
        #expect(ProcessSignal.interrupt.description == "SIGINT")
    }
}
