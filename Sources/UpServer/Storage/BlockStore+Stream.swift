import Synchronization

/// Pieces of one range of a blob, pulled one at a time (`BlockStore.pieceReader(of:range:size:)`).
/// `next()` is called from one task at a time.
public protocol BlobPieceReader: Sendable {
    /// The next piece (never empty, at most the size asked for), or `nil` after the last byte.
    ///
    /// - Throws: `BlockStoreError` (`.notFound`, `.outOfRange`, `.io`), the store's own errors,
    ///   or `CancellationError` after ``cancel()``.
    func next() async throws -> [UInt8]?

    /// Stops the read and releases what it holds (an S3 transfer); a later ``next()`` throws.
    func cancel()
}

extension BlockStore {
    /// See `BlockStore.pieceReader(of:range:size:)`: slices of `size` bytes, each read with
    /// ``read(_:range:)`` off the cooperative pool (`BlockingWork`) when it is asked for.
    public func pieceReader(of blob: BlobID, range: Range<Int64>, size: Int) -> any BlobPieceReader {
        SlicedBlobReader(store: self, blob: blob, range: range, size: size)
    }
}

/// A blob's range read slice by slice with the store's synchronous ``BlockStore/read(_:range:)``.
final class SlicedBlobReader: BlobPieceReader {
    private let store: any BlockStore
    private let blob: BlobID
    private let size: Int
    private let state: Mutex<(next: Int64, end: Int64, cancelled: Bool)>

    init(store: any BlockStore, blob: BlobID, range: Range<Int64>, size: Int) {
        self.store = store
        self.blob = blob
        self.size = max(1, size)
        state = Mutex((range.lowerBound, range.upperBound, false))
    }

    func next() async throws -> [UInt8]? {
        let slice = try state.withLock { s -> Range<Int64>? in
            if s.cancelled { throw CancellationError() }
            guard s.next < s.end else { return nil }
            let slice = s.next..<min(s.end, s.next + Int64(size))
            s.next = slice.upperBound
            return slice
        }
        guard let slice else { return nil }
        let store = self.store, blob = self.blob
        return try await BlockingWork.run { try store.read(blob, range: slice) }
    }

    func cancel() { state.withLock { $0.cancelled = true } }
}

extension Segment {
    /// The blobs `range` of `segments` joined in order touches, each with the range inside it.
    ///
    /// - Throws: `BlockStoreError.io` when `range` reaches outside the segments' bytes (an object
    ///   whose size and manifest disagree).
    static func pieces(of range: Range<Int64>, in segments: [Segment]) throws -> [(BlobID, Range<Int64>)] {
        let total = segments.reduce(Int64(0)) { $0 + $1.length }
        guard range.lowerBound >= 0, range.upperBound <= total else {
            throw BlockStoreError.io(nil, reason: "range \(range) outside the \(total) bytes of the segments")
        }
        var pieces: [(BlobID, Range<Int64>)] = []
        var offset: Int64 = 0
        for segment in segments {
            let start = max(range.lowerBound, offset), end = min(range.upperBound, offset + segment.length)
            if start < end { pieces.append((segment.blob, (start - offset)..<(end - offset))) }
            offset += segment.length
        }
        return pieces
    }
}
