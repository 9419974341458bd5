import HTTPTransport
import ObjectStorage
import Synchronization

extension S3BlockStore {
    /// See `BlockStore.pieceReader(of:range:size:)`: the chunk objects overlapping `range` are
    /// fetched one after the other with ranged GETs and their bodies handed on as they arrive
    /// (``S3RangeReader``), all async, no thread blocked and nothing staged on disk.
    public func pieceReader(of blob: BlobID, range: Range<Int64>, size: Int) -> any BlobPieceReader {
        S3RangeReader(store: self, blob: blob, range: range, size: size)
    }
}

/// `range` of one S3 blob as the pieces of the ranged GETs of its chunk objects. The chain is
/// listed at the first ``next()``; a GET starts only when the previous one's body has ended.
final class S3RangeReader: BlobPieceReader {
    private let store: S3BlockStore
    private let blob: BlobID
    private let range: Range<Int64>
    private let size: Int
    private let state = Mutex(State())

    private struct State {
        var pieces: [(S3BlobChunk, Range<Int64>)]?
        var index = 0
        var body: ResponseBody?
        /// The part of the current piece past `size`, handed out next.
        var rest: [UInt8] = []
        var cancelled = false
    }

    init(store: S3BlockStore, blob: BlobID, range: Range<Int64>, size: Int) {
        self.store = store
        self.blob = blob
        self.range = range
        self.size = max(1, size)
    }

    func next() async throws -> [UInt8]? {
        let listed = try state.withLock { s in
            if s.cancelled { throw CancellationError() }
            return s.pieces != nil
        }
        if !listed {
            let pieces = try await chunkPieces()
            state.withLock { $0.pieces = pieces }
        }
        while true {
            enum Step { case piece([UInt8]), read(ResponseBody), get(S3BlobChunk, Range<Int64>), end }
            let step = try state.withLock { s -> Step in
                if s.cancelled { throw CancellationError() }
                if !s.rest.isEmpty { return .piece(cut(&s.rest)) }
                if let body = s.body { return .read(body) }
                guard let pieces = s.pieces, s.index < pieces.count else { return .end }
                s.index += 1
                return .get(pieces[s.index - 1].0, pieces[s.index - 1].1)
            }
            switch step {
            case .piece(let piece): return piece
            case .end: return nil
            case .get(let chunk, let inner):
                let download = try await store.client.getObject(chunk.key, range: inner)
                let cancelled = state.withLock { s in
                    if !s.cancelled { s.body = download.body }
                    return s.cancelled
                }
                if cancelled { download.body.cancel() }
            case .read(let body):
                var iterator = body.makeAsyncIterator()
                let piece = try await iterator.next()
                let out = state.withLock { s -> [UInt8]? in
                    guard let piece else {
                        s.body = nil
                        return nil
                    }
                    s.rest = piece
                    return s.rest.isEmpty ? nil : cut(&s.rest)
                }
                if let out { return out }
            }
        }
    }

    func cancel() {
        let body = state.withLock { s in
            s.cancelled = true
            defer { s.body = nil }
            return s.body
        }
        body?.cancel()
    }

    /// The chunk objects `range` touches, each with the range inside it.
    private func chunkPieces() async throws -> [(S3BlobChunk, Range<Int64>)] {
        let chunks = try await store.listChunks(of: blob)
        guard !chunks.isEmpty else { throw BlockStoreError.notFound(blob) }
        let length = S3BlobChunk.chainLength(chunks)
        guard range.lowerBound >= 0, range.upperBound <= length else {
            throw BlockStoreError.outOfRange(blob, requested: range, length: length)
        }
        return S3BlobChunk.pieces(of: range, in: chunks)
    }

    /// The first `size` bytes of `bytes`, removed from it.
    private func cut(_ bytes: inout [UInt8]) -> [UInt8] {
        guard bytes.count > size else {
            defer { bytes = [] }
            return bytes
        }
        let head = Array(bytes[..<size])
        bytes.removeFirst(size)
        return head
    }
}
