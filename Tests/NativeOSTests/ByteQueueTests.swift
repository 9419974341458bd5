import Testing

import NativeOS

/// The queue of body pieces between the HTTP engines and Swift: order, byte counts, and that
/// nothing it has handed out stays alive inside it.
@Suite struct ByteQueueTests {
    /// Piece `i` of a test: `length` bytes that say which piece and which byte they are.
    static func piece(_ i: Int, length: Int = 1000) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) }
    }

    /// Where an array's bytes live once it is written to: the same place only if no one else
    /// holds the buffer (a shared buffer is copied first).
    static func addressAfterWriting(_ bytes: inout [UInt8]) -> UInt {
        unsafe bytes.withUnsafeMutableBufferPointer { buffer in
            unsafe buffer[0] &+= 1
            return UInt(bitPattern: buffer.baseAddress)
        }
    }

    static func address(_ bytes: [UInt8]) -> UInt {
        unsafe bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    @Test func piecesComeOutWholeInOrderThroughManyRefills() {
        var queue = ByteQueue()
        var next = 0, expected = 0
        // A producer that stays ahead: the queue is never empty, slots are reclaimed on the way.
        for round in 0..<200 {
            for _ in 0..<(round % 3 + 1) {
                queue.append(Self.piece(next, length: 10 + next % 7))
                next += 1
            }
            while queue.count > 40, let piece = queue.popFirst() {
                #expect(piece == Self.piece(expected, length: 10 + expected % 7))
                expected += 1
            }
        }
        while let piece = queue.popFirst() {
            #expect(piece == Self.piece(expected, length: 10 + expected % 7))
            expected += 1
        }
        #expect(expected == next)
        #expect(queue.isEmpty && queue.count == 0)
    }

    @Test func aTakenPieceIsNoLongerHeldByTheQueue() {
        var queue = ByteQueue()
        for i in 0..<40 { queue.append(Self.piece(i)) }
        for i in 0..<30 {
            guard var piece = queue.popFirst() else { Issue.record("piece \(i) missing"); return }
            let before = Self.address(piece)
            #expect(Self.addressAfterWriting(&piece) == before, "piece \(i) was still held by the queue")
            queue.append(Self.piece(100 + i))  // never empties, as under a steady upload
        }
    }

    @Test func copyCrossesPiecesAndCountsBytes() {
        var queue = ByteQueue()
        let pieces = [Self.piece(1, length: 5), Self.piece(2, length: 3), [], Self.piece(3, length: 9)]
        for piece in pieces { queue.append(piece) }
        #expect(queue.count == 17)
        var out = [UInt8](repeating: 0, count: 32)
        var taken = 0
        for max in [4, 2, 7, 32] {
            let n = unsafe out.withUnsafeMutableBytes { unsafe queue.take(into: UnsafeMutableRawBufferPointer(rebasing: $0[taken..<min(32, taken + max)])) }
            #expect(n == min(max, 17 - taken))
            taken += n
            #expect(queue.count == 17 - taken)
        }
        #expect(Array(out.prefix(taken)) == pieces.flatMap { $0 })
        #expect(queue.isEmpty)
    }

    @Test func copiedPiecesAreLetGoOf() {
        var queue = ByteQueue()
        var first = Self.piece(1, length: 8)
        queue.append(first)
        queue.append(Self.piece(2, length: 8))
        var out = [UInt8](repeating: 0, count: 12)
        _ = unsafe out.withUnsafeMutableBytes { unsafe queue.take(into: $0) }
        // The first piece went out whole, so the test's copy is its only holder again.
        let before = Self.address(first)
        #expect(Self.addressAfterWriting(&first) == before)
        #expect(queue.count == 4)
    }

    @Test func takeAllJoinsWhatWaitsAndHandsASinglePieceOverAsItIs() {
        var queue = ByteQueue()
        queue.append(Self.piece(1, length: 6))
        queue.append(Self.piece(2, length: 4))
        var out = [UInt8](repeating: 0, count: 2)
        _ = unsafe out.withUnsafeMutableBytes { unsafe queue.take(into: $0) }
        #expect(queue.takeAll() == Array(Self.piece(1, length: 6).dropFirst(2)) + Self.piece(2, length: 4))
        #expect(queue.isEmpty)
        var single = Self.piece(3)
        let original = Self.address(single)
        queue.append(single)
        single = []
        var whole = queue.takeAll()
        #expect(Self.address(whole) == original, "takeAll copied a single whole piece")
        #expect(Self.addressAfterWriting(&whole) == original, "the queue still held the piece it handed over")
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }

    @Test func removeAllEmptiesIt() {
        var queue = ByteQueue()
        queue.append(Self.piece(1))
        queue.append(Self.piece(2))
        _ = queue.popFirst()
        queue.removeAll()
        #expect(queue.isEmpty && queue.popFirst() == nil)
        queue.append(Self.piece(3))
        #expect(queue.popFirst() == Self.piece(3))
    }
}
