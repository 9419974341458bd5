/// Byte pieces waiting between a producer and a consumer, first in, first out, with the count of
/// bytes not yet taken: a request body between MHD and its handler, a streamed response between
/// its producer and MHD, libcurl's streamed request and response bodies, and URLSession's
/// response pieces.
///
/// A piece is let go of the moment it is taken. An array read from a moving front index keeps
/// every taken piece alive until the queue empties, and a queue that a steady producer keeps
/// busy never empties: under 32 concurrent uploads that held tens of MiB of body pieces already
/// written to disk (up-server's peak RSS 110–133 MiB, most of it in the malloc arenas of the two
/// MHD threads that allocate the pieces). Taken slots are reclaimed in amortized O(1).
///
/// Not synchronized: its owner keeps it under its own lock.
public struct ByteQueue: Sendable {
    private var pieces: [[UInt8]] = []
    /// The first piece not yet (wholly) taken.
    private var head = 0
    /// Bytes of `pieces[head]` already copied out by ``take(into:)``.
    private var headOffset = 0
    /// Bytes waiting: appended and not yet taken.
    public private(set) var count = 0

    /// An empty queue.
    public init() {}

    /// Whether no byte waits.
    public var isEmpty: Bool { count == 0 }

    /// Queues `piece` behind the others (an empty piece is ignored).
    public mutating func append(_ piece: [UInt8]) {
        guard !piece.isEmpty else { return }
        pieces.append(piece)
        count += piece.count
    }

    /// Takes the first piece whole; nil when none waits. Not after a partial ``take(into:)``.
    public mutating func popFirst() -> [UInt8]? {
        precondition(headOffset == 0, "popFirst after a partial take(into:)")
        guard head < pieces.count else { return nil }
        let piece = release(head)
        head += 1
        count -= piece.count
        compact()
        return piece
    }

    /// Copies up to `buffer.count` waiting bytes, in order, into `buffer`; returns how many.
    public mutating func take(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var copied = 0
        while copied < buffer.count && head < pieces.count {
            let n = min(buffer.count - copied, pieces[head].count - headOffset)
            unsafe pieces[head].withUnsafeBytes { piece in
                unsafe buffer.baseAddress!.advanced(by: copied)
                    .copyMemory(from: piece.baseAddress!.advanced(by: headOffset), byteCount: n)
            }
            copied += n
            headOffset += n
            if headOffset == pieces[head].count {
                _ = release(head)
                head += 1
                headOffset = 0
            }
        }
        count -= copied
        compact()
        return copied
    }

    /// Everything waiting, as one array (the piece itself when only one whole piece waits), and
    /// empties the queue.
    public mutating func takeAll() -> [UInt8] {
        defer { removeAll() }
        if head == pieces.count - 1 && headOffset == 0 { return release(head) }
        var all: [UInt8] = []
        all.reserveCapacity(count)
        for index in head..<pieces.count {
            all.append(contentsOf: pieces[index][(index == head ? headOffset : 0)...])
        }
        return all
    }

    /// Drops every waiting piece.
    public mutating func removeAll() {
        pieces = []
        head = 0
        headOffset = 0
        count = 0
    }

    /// The piece in slot `index`, leaving the slot empty (so the queue no longer holds it).
    private mutating func release(_ index: Int) -> [UInt8] {
        var piece: [UInt8] = []
        swap(&piece, &pieces[index])
        return piece
    }

    /// Reclaims the slots of taken pieces: all of them once nothing waits, else once they are the
    /// larger half, so the slot array stays bounded by what waits.
    private mutating func compact() {
        if head == pieces.count {
            pieces.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 16 && head * 2 >= pieces.count {
            pieces.removeFirst(head)
            head = 0
        }
    }
}
