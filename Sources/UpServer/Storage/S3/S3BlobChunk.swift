/// One chunk object of a blob in `S3BlockStore`, and the arithmetic on a blob's chunks — pure,
/// so it is tested without a store.
struct S3BlobChunk: Sendable, Equatable {
    /// The object's key.
    var key: String
    /// Where in the blob it starts.
    var offset: Int64
    /// Its length.
    var size: Int64

    var end: Int64 { offset + size }

    /// The blob's length: how far the chunks reach contiguously from 0 (`chunks` in offset
    /// order). A chunk past a gap is a leftover of an unacknowledged write, or bytes after lost ones.
    static func chainLength(_ chunks: [S3BlobChunk]) -> Int64 {
        var length: Int64 = 0
        for chunk in chunks where chunk.offset == length { length = chunk.end }
        return length
    }

    /// What an append at `offset` must clear: chunks starting at or past it, and the one that
    /// starts before it and runs past it (to be cut back to `offset`).
    static func beyond(_ offset: Int64, in chunks: [S3BlobChunk]) -> (stale: [S3BlobChunk], straddling: S3BlobChunk?) {
        (chunks.filter { $0.offset >= offset }, chunks.last { $0.offset < offset && $0.end > offset })
    }

    /// The chunks of the chain from 0 covering `range`, each with the range inside it to read.
    static func pieces(of range: Range<Int64>, in chunks: [S3BlobChunk]) -> [(S3BlobChunk, Range<Int64>)] {
        var result: [(S3BlobChunk, Range<Int64>)] = []
        var position: Int64 = 0
        for chunk in chunks where chunk.offset == position {
            position = chunk.end
            let start = max(range.lowerBound, chunk.offset), end = min(range.upperBound, chunk.end)
            if start < end { result.append((chunk, (start - chunk.offset)..<(end - chunk.offset))) }
        }
        return result
    }
}
