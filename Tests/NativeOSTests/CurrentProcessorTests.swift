import Foundation
import NativeOS
import Synchronization
import Testing

@Suite("CurrentProcessor")
struct CurrentProcessorTests {
    /// Every thread reads a processor that exists, and threads on all cores together see more
    /// than one of them (so per-CPU shards are really spread) when the machine has more than one.
    @Test func namesAProcessorThatExistsAndThreadsSeeSeveral() {
        let processors = ProcessInfo.processInfo.activeProcessorCount
        let seen = Mutex<Set<Int>>([])
        DispatchQueue.concurrentPerform(iterations: 4 * processors) { _ in
            var local = Set<Int>()
            let until = Date().addingTimeInterval(0.05)
            while Date() < until { local.insert(CurrentProcessor.index) }
            seen.withLock { $0.formUnion(local) }
        }
        let indices = seen.withLock { $0 }
        #expect(indices.allSatisfy { (0..<ProcessInfo.processInfo.processorCount).contains($0) })
        if processors > 1 { #expect(indices.count > 1) }
    }
}
