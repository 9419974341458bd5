@testable import Basics
import Foundation
import Synchronization
import Testing

/// LogSink's batched mode: lines wait until a batch is full, an urgent line comes, or flush();
/// every line comes out once, whole and in order.
@Suite("LineBatch")
struct LineBatchTests {
    final class Output: Sendable {
        let writes = Mutex<[[UInt8]]>([])
        var text: String { writes.withLock { String(decoding: $0.joined(), as: UTF8.self) } }
        var count: Int { writes.withLock { $0.count } }
        func take(_ bytes: [UInt8]) { writes.withLock { $0.append(bytes) } }
    }

    static func batch(_ output: Output, maxLines: Int = 3, maxBytes: Int = 1 << 20) -> LineBatch {
        // An interval far longer than the test: only the rules under test write.
        LineBatch(maxLines: maxLines, maxBytes: maxBytes, interval: .seconds(3600)) { output.take($0) }
    }

    @Test func holdsLinesUntilTheBatchIsFullThenWritesThemInOneCall() {
        let output = Output()
        let batch = Self.batch(output)
        batch.append(Array("a\n".utf8), urgent: false)
        batch.append(Array("b\n".utf8), urgent: false)
        #expect(output.count == 0)
        batch.append(Array("c\n".utf8), urgent: false)
        #expect(output.count == 1)
        #expect(output.text == "a\nb\nc\n")
    }

    @Test func anUrgentLineGoesOutAtOnceAfterTheLinesBeforeIt() {
        let output = Output()
        let batch = Self.batch(output)
        batch.append(Array("info\n".utf8), urgent: false)
        batch.append(Array("error\n".utf8), urgent: true)
        #expect(output.text == "info\nerror\n")
    }

    @Test func aLargeLineFillsTheBatchByBytes() {
        let output = Output()
        let batch = Self.batch(output, maxLines: 100, maxBytes: 8)
        batch.append(Array("0123456789\n".utf8), urgent: false)
        #expect(output.text == "0123456789\n")
    }

    @Test func flushWritesWhatWaitsAndNothingTwice() {
        let output = Output()
        let batch = Self.batch(output)
        batch.append(Array("x\n".utf8), urgent: false)
        batch.flush()
        batch.flush()
        #expect(output.text == "x\n")
        #expect(output.count == 1)
    }

    @Test func everyLineOfManyWritersComesOutOnceAndWhole() async {
        let output = Output()
        let batch = Self.batch(output, maxLines: 7)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for i in 0..<500 { batch.append(Array("w\(writer)-\(i)\n".utf8), urgent: i % 97 == 0) }
                }
            }
        }
        batch.flush()
        let lines = output.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 8 * 500)
        #expect(Set(lines).count == 8 * 500)
        for writer in 0..<8 {   // each writer's lines in its own order
            let own = lines.filter { $0.hasPrefix("w\(writer)-") }.map { Int($0.split(separator: "-")[1])! }
            #expect(own == Array(0..<500))
        }
    }

    @Test func aLineComingWhileABatchIsBeingWrittenGoesOutAfterItAndBeforeItsAppendReturns() {
        let output = Output()
        let writing = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        // The first batch's write blocks until the gate opens: a slow device.
        let batch = LineBatch(maxLines: 1000, maxBytes: 1 << 20, interval: .seconds(3600)) { bytes in
            if bytes == Array("a\n".utf8) {
                writing.signal()
                gate.wait()
            }
            output.take(bytes)
        }
        Thread { batch.append(Array("a\n".utf8), urgent: true) }.start()
        writing.wait()
        let returned = DispatchSemaphore(value: 0)
        Thread {
            batch.append(Array("b\n".utf8), urgent: true)
            returned.signal()
        }.start()
        let returnedDuringTheWrite = returned.wait(timeout: .now() + .milliseconds(100)) == .success
        gate.signal()
        if !returnedDuringTheWrite { returned.wait() }
        #expect(!returnedDuringTheWrite)
        #expect(output.text == "a\nb\n")
    }

    @Test func theBackgroundFlushWritesAWaitingLineWithoutAnyCall() async {
        let output = Output()
        let batch = LineBatch(maxLines: 100, maxBytes: 1 << 20, interval: .milliseconds(10)) { output.take($0) }
        batch.append(Array("late\n".utf8), urgent: false)
        // Liveness, not speed: generous bound.
        for _ in 0..<500 where output.count == 0 { try? await Task.sleep(for: .milliseconds(10)) }
        #expect(output.text == "late\n")
    }
}
