import Synchronization

/// `range` of the bytes of `segments` joined in order, pulled piece by piece from the store
/// (`BlockStore.pieceReader(of:range:size:)` for each blob it touches, one after the other):
/// how a download that is not one local file is streamed, with nothing staged on disk and at
/// most one piece in hand. Each blob must deliver exactly the bytes of its part of the range;
/// one that ends short or runs long is a `BlockStoreError.io`.
///
/// `next()` is called from one task at a time; ``cancel()`` from any thread.
public final class SegmentReader: Sendable {
    /// The bytes the reader produces in all.
    public let length: Int64
    private let store: any BlockStore
    private let pieces: [(BlobID, Range<Int64>)]
    private let pieceSize: Int
    private let state = Mutex(State())

    private struct State {
        var index = 0
        var current: (any BlobPieceReader)?
        var remaining: Int64 = 0
        var primed: [UInt8]?
        var cancelled = false
    }

    /// A reader of `range` of `segments`.
    ///
    /// - Throws: `BlockStoreError.io` when `range` is not within the segments' bytes.
    public init(store: any BlockStore, segments: [Segment], range: Range<Int64>, pieceSize: Int = 1 << 20) throws {
        self.store = store
        self.pieces = try Segment.pieces(of: range, in: segments)
        self.length = Int64(range.count)
        self.pieceSize = max(1, pieceSize)
    }

    /// Reads the first piece now, so that a blob missing at the start fails before a response
    /// head is sent (its status still reaches the client); ``next()`` returns it first.
    public func prime() async throws {
        let first = try await next()
        state.withLock { $0.primed = first }
    }

    /// The next piece (never empty), or `nil` after the last byte of the range.
    ///
    /// - Throws: what the store's readers throw; `BlockStoreError.io` for a blob shorter or
    ///   longer than its segment; `CancellationError` after ``cancel()``.
    public func next() async throws -> [UInt8]? {
        while true {
            enum Step { case piece([UInt8]), read(any BlobPieceReader, BlobID), end }
            let step = try state.withLock { s -> Step in
                if s.cancelled { throw CancellationError() }
                if let primed = s.primed {
                    s.primed = nil
                    return .piece(primed)
                }
                if let current = s.current { return .read(current, pieces[s.index - 1].0) }
                guard s.index < pieces.count else { return .end }
                let (blob, inner) = pieces[s.index]
                s.index += 1
                s.remaining = Int64(inner.count)
                let reader = store.pieceReader(of: blob, range: inner, size: pieceSize)
                s.current = reader
                return .read(reader, blob)
            }
            switch step {
            case .piece(let piece): return piece
            case .end: return nil
            case .read(let reader, let blob):
                let piece = try await reader.next()
                let done = try state.withLock { s -> Bool in
                    guard let piece else {
                        guard s.remaining == 0 else {
                            throw BlockStoreError.io(blob, reason: "blob ended \(s.remaining) bytes short of its segment")
                        }
                        s.current = nil
                        return false
                    }
                    guard Int64(piece.count) <= s.remaining else {
                        throw BlockStoreError.io(blob, reason: "blob longer than its segment")
                    }
                    s.remaining -= Int64(piece.count)
                    return !piece.isEmpty
                }
                if done, let piece { return piece }
            }
        }
    }

    /// Stops reading: the blob read in flight is cancelled and later ``next()`` calls throw.
    public func cancel() {
        let current = state.withLock { s in
            s.cancelled = true
            return s.current
        }
        current?.cancel()
    }
}
