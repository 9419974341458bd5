/// Pieces of bytes in arrival order, read from the front: the buffer inside the streaming pipes.
struct ByteQueue {
    private var pieces: [[UInt8]] = []
    /// Bytes of `pieces[0]` already taken.
    private var headOffset = 0
    /// Bytes held.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        pieces.append(bytes)
        count += bytes.count
    }

    /// Copies up to `buffer.count` bytes into `buffer` and drops them; returns how many.
    mutating func take(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var written = 0
        while written < buffer.count, let first = pieces.first {
            let n = min(first.count - headOffset, buffer.count - written)
            unsafe first.withUnsafeBytes { source in
                unsafe buffer.baseAddress!.advanced(by: written)
                    .copyMemory(from: source.baseAddress!.advanced(by: headOffset), byteCount: n)
            }
            written += n
            headOffset += n
            if headOffset == first.count {
                pieces.removeFirst()
                headOffset = 0
            }
        }
        count -= written
        return written
    }

    /// Everything held, as one array, and empties the queue.
    mutating func takeAll() -> [UInt8] {
        defer {
            pieces = []
            headOffset = 0
            count = 0
        }
        if pieces.count == 1 && headOffset == 0 { return pieces[0] }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for (index, piece) in pieces.enumerated() {
            out.append(contentsOf: index == 0 ? piece[headOffset...] : piece[...])
        }
        return out
    }
}
