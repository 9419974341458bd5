import NativeCrypto
import Testing
@testable import UpClient

@Suite struct ResumableUploadTests {
    /// A stand-in part digest (20 bytes) for part `number`.
    static func digest(_ number: Int) -> [UInt8] { [UInt8](repeating: UInt8(number), count: 20) }

    /// Runs the machine to completion, accepting every chunk, and returns the action transcript.
    static func transcript(size: Int64, chunk: Int, concurrency: Int) -> [ResumableUpload.Action] {
        var machine = ResumableUpload(fileSize: size, chunkSize: chunk, concurrency: concurrency)
        var log: [ResumableUpload.Action] = []
        var pending: [ResumableUpload.Action] = []
        while true {
            let action = machine.nextAction()
            switch action {
            case .makeBlock, .putChunk:
                log.append(action)
                pending.append(action)
                #expect(pending.count <= concurrency)
            case .wait:
                let done = pending.removeFirst()
                switch done {
                case .makeBlock(let index, _, let range), .putChunk(let index, _, _, let range):
                    let offset = Int(range.upperBound - Int64(index) * ResumableUpload.blockSize)
                    machine.handle(.chunkAccepted(index: index, context: "c\(index)-\(offset)", offset: offset, crc32: 1, expiresAt: 9, hash: .init(crc32: 1)))
                default: Issue.record("unexpected \(done)")
                }
            case .makeFile:
                log.append(action)
                machine.handle(.fileMade)
            case .finished:
                return log
            case .failed:
                Issue.record("failed")
                return log
            }
        }
    }

    @Test func oddChunkSizesCoverEachBlockInOrder() {
        let mib = Int64(1 << 20)
        let log = Self.transcript(size: 9 * mib + 5, chunk: 1_572_864, concurrency: 2)
        // Block 0 is 1.5 + 1.5 + 1 MiB; the chunks of a block are contiguous and in order.
        var next: [Int: Int64] = [:]
        for action in log {
            switch action {
            case .makeBlock(let index, let size, let range):
                #expect(range.lowerBound == Int64(index) * 4 * mib)
                #expect(size == (index == 2 ? Int(mib) + 5 : Int(4 * mib)))
                next[index] = range.upperBound
            case .putChunk(let index, let context, let offset, let range):
                #expect(range.lowerBound == next[index])
                #expect(context == "c\(index)-\(offset)")
                next[index] = range.upperBound
            case .makeFile(let contexts):
                #expect(contexts == ["c0-4194304", "c1-4194304", "c2-1048581"])
            default: break
            }
        }
        #expect(log.count { if case .makeBlock = $0 { true } else { false } } == 3)
        #expect(log.count { if case .putChunk = $0 { true } else { false } } == 2 + 2)
        #expect(next == [0: 4 * mib, 1: 8 * mib, 2: 9 * mib + 5])
    }

    @Test func tinyChunksAndTheConcurrencyLimit() {
        let log = Self.transcript(size: 5 << 20, chunk: 1024 + 7, concurrency: 3)
        let chunks = log.filter { if case .makeFile = $0 { false } else { true } }
        #expect(chunks.count == (4 << 20 + 1030) / 1031 + (1 << 20 + 1030) / 1031)
    }

    @Test func anExpiredContextRedoesTheBlock() {
        var machine = ResumableUpload(fileSize: 5 << 20, chunkSize: 2 << 20, concurrency: 1)
        #expect(machine.nextAction() == .makeBlock(index: 0, blockSize: 4 << 20, range: 0..<(2 << 20)))
        machine.handle(.chunkAccepted(index: 0, context: "a", offset: 2 << 20, crc32: 0, expiresAt: 1, hash: .init(crc32: 0)))
        #expect(machine.nextAction() == .putChunk(index: 0, context: "a", offset: 2 << 20, range: (2 << 20)..<(4 << 20)))
        machine.handle(.contextExpired(index: 0))
        #expect(machine.nextAction() == .makeBlock(index: 0, blockSize: 4 << 20, range: 0..<(2 << 20)))
    }

    @Test func aCRCMismatchResendsTheSameChunkThenGivesUp() {
        var machine = ResumableUpload(fileSize: 10, chunkSize: 1024, concurrency: 1, maxFailures: 1)
        let first = machine.nextAction()
        machine.handle(.chunkFailed(index: 0, retryable: true))
        #expect(machine.nextAction() == first)
        machine.handle(.chunkFailed(index: 0, retryable: true))
        guard case .failed(0, _) = machine.nextAction() else { Issue.record("should fail"); return }
    }

    @Test func restoredBlocksAreNotSentAgain() {
        let done = ResumableUpload.Block(context: "x", offset: 4 << 20, crc32: 0, expiresAt: 9)
        let half = ResumableUpload.Block(context: "y", offset: 1 << 20, crc32: 0, expiresAt: 9)
        var machine = ResumableUpload(fileSize: 8 << 20, chunkSize: 1 << 20, concurrency: 4, blocks: [done, half])
        #expect(machine.acknowledgedBytes == 5 << 20)
        #expect(machine.nextAction() == .putChunk(index: 1, context: "y", offset: 1 << 20, range: (5 << 20)..<(6 << 20)))
        #expect(machine.nextAction() == .wait)
    }
}

@Suite struct MultipartUploadTests {
    @Test func partsGoInOrderAndCompleteAscending() {
        var machine = MultipartUpload(fileSize: 10 << 20, partSize: 3 << 20, concurrency: 2)
        #expect(machine.nextAction() == .initiate)
        #expect(machine.nextAction() == .wait)
        machine.handle(.initiated(uploadID: "u", expiresAt: 9))
        #expect(machine.nextAction() == .putPart(uploadID: "u", number: 1, range: 0..<(3 << 20)))
        #expect(machine.nextAction() == .putPart(uploadID: "u", number: 2, range: (3 << 20)..<(6 << 20)))
        #expect(machine.nextAction() == .wait)
        machine.handle(.partAccepted(number: 2, etag: "e2", digest: ResumableUploadTests.digest(2)))
        #expect(machine.nextAction() == .putPart(uploadID: "u", number: 3, range: (6 << 20)..<(9 << 20)))
        machine.handle(.partAccepted(number: 3, etag: "e3", digest: ResumableUploadTests.digest(3)))
        #expect(machine.nextAction() == .putPart(uploadID: "u", number: 4, range: (9 << 20)..<(10 << 20)))
        machine.handle(.partAccepted(number: 4, etag: "e4", digest: ResumableUploadTests.digest(4)))
        #expect(machine.nextAction() == .wait)
        machine.handle(.partAccepted(number: 1, etag: "e1", digest: ResumableUploadTests.digest(1)))
        #expect(machine.nextAction() == .complete(uploadID: "u", parts: (1...4).map { .init(number: $0, etag: "e\($0)", digest: Hex.encode(ResumableUploadTests.digest($0))) }))
        machine.handle(.completed)
        #expect(machine.nextAction() == .finished)
    }

    @Test func anExpiredUploadStartsOver() {
        var machine = MultipartUpload(
            fileSize: 2 << 20, partSize: 1 << 20, concurrency: 1, uploadID: "old", expiresAt: 9,
            parts: [.init(number: 1, etag: "e1")])
        #expect(machine.nextAction() == .putPart(uploadID: "old", number: 2, range: (1 << 20)..<(2 << 20)))
        machine.handle(.uploadExpired)
        #expect(machine.parts.isEmpty)
        #expect(machine.nextAction() == .initiate)
    }
}
