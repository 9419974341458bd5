import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// Carries out a `BlockUpload`'s actions for one mkblk or bput request: streams the body into the
/// blob, reads and compares, writes the index, undoes, answers. Every decision is the machine's.
struct BlockUploadRunner: Sendable {
    let blocks: any BlockIndex
    /// Streams the chunks (and knows the blob store and the running SHA-1s).
    let ingest: BlobIngest
    let contexts: BlockContexts
    let metrics: UpMetrics
    let logger: Logger

    /// Runs `machine` from `first` until it answers or fails.
    ///
    /// - Returns: The 200 reply (`BlockReply`).
    /// - Throws: The machine's answer (`UpError`), or the error a step threw.
    func run(_ machine: inout BlockUpload, from first: BlockUpload.Action, body: RequestBodyStream) async throws
        -> Response
    {
        var action = first
        var failure: (any Error)?
        while true {
            switch action {
            case .reply(let record, let chunkCRC):
                return BlockReply.make(record: record, chunkCRC: chunkCRC, contexts: contexts).response
            case .undo(let undo, let answer):
                await self.undo(undo, blob: machine.blob)
                throw answer ?? failure ?? UpError(.internalError, detail: "block upload failed without an error")
            default:
                let event: BlockUpload.Event
                do {
                    event = try await perform(action, blob: machine.blob, isNew: machine.isNew, body: body)
                } catch {
                    failure = error
                    event = .failed(superseded: Task.isCancelled)
                }
                action = machine.handle(event)
            }
        }
    }

    private func perform(_ action: BlockUpload.Action, blob: BlobID, isNew: Bool, body: RequestBodyStream) async throws
        -> BlockUpload.Event
    {
        switch action {
        case .rewind(let from, let to, let crc32):
            return .rewound(try await blocks.rewindBlock(blob, from: from, to: to, crc32: crc32))
        case .write(let offset, let blockSize, let resumingCRC, let overflow):
            var target = BlobTarget.chunk(of: blob, at: offset, blockSize: blockSize, overflow: overflow)
            if !isNew && ingest.store.isShared {
                target.beforeAppend = { [blocks] in
                    try await Self.checkStillAt(offset, crc32: resumingCRC, of: blob, in: blocks)
                }
            }
            let written = try await ingest.writer(target).writeAll(body)
            if !isNew && ingest.store.isShared && written.count > ingest.store.appendSize {
                try await Self.checkWhole(blob, through: offset + Int64(written.count), in: ingest.store)
            }
            if written.count > 0 {
                metrics.bytesReceived.increment(by: Double(written.count))
                metrics.chunks.increment()
            }
            // Each byte is CRC'd once: the block's CRC is the resumed one extended by this chunk's.
            guard let chunkCRC = written.crc32 else { preconditionFailure("a v1 chunk target computes CRC-32") }
            let blockCRC = CRC32.combine(resumingCRC, chunkCRC, length: written.count)
            return .written(
                .init(
                    count: written.count, chunkCRC: chunkCRC, blockCRC: blockCRC, sha1: written.blockSHA1,
                    sniffedType: offset == 0 ? written.sniffedType(startingBlobOf: blockSize) : nil))
        case .compare(let offset, let limit):
            return .replayed(try await compare(body, with: blob, at: offset, limit: limit))
        case .create(let record):
            _ = try await blocks.createBlock(
                blob, blockSize: record.blockSize, received: record.offset, crc32: record.crc32, sha1: record.sha1,
                sniffedType: record.sniffedType, expiresAt: record.expiresAt, createdAt: record.createdAt)
            return .recorded(true)
        case .advance(let from, let record):
            return .recorded(
                try await blocks.advanceBlock(blob, from: from, to: record.offset, crc32: record.crc32, sha1: record.sha1))
        case .reply, .undo:
            preconditionFailure("answers are not steps")
        }
    }

    /// On a shared store, right before each append of a chunk: refuses unless the index still
    /// has the block at the chunk's `offset` with `crc32` (the row moves only when a chunk ends).
    /// This process's write lock does not cover the other instances, and a request whose client
    /// gave up on it and resent the chunk elsewhere may still be reading bytes from its socket:
    /// its first append would cut away chunks the other instance has acknowledged since, a later
    /// one write over them. It narrows the window to the time between this read and the store's
    /// write; it does not close it (docs/ARCHITECTURE.md). One index read per append (512 KiB).
    private static func checkStillAt(_ offset: Int64, crc32: UInt32, of blob: BlobID, in blocks: any BlockIndex) async throws {
        let row = try await blocks.block(blob)
        guard let row, row.offset == offset, row.crc32 == crc32 else {
            throw UpError(
                .invalidContext,
                detail: "block \(blob) moved on before this chunk was written (now at \(row.map { String($0.offset) } ?? "nothing"))")
        }
    }

    /// On a shared store, after a chunk's last append and before the index acknowledges it:
    /// refuses (503, the client sends the chunk again) unless the blob still reaches `end`.
    /// A stalled attempt of the same chunk on another instance passes its check before each
    /// append while this one is still writing (the row moves only when a chunk ends), and its
    /// first append clears whatever lies past the chunk's offset (S3 keeps each append as an
    /// object, and a failed try's leftovers must go): objects this request had already written.
    /// Its own write puts back the first of them, so the blob then has a hole, and `length`,
    /// which counts the contiguous chunks from 0, stops short of `end`. The resent chunk's first
    /// append clears both attempts' objects and writes the chunk whole. One LIST per bput of
    /// more than one append: a chunk written in one append has one object, which the stalled
    /// attempt's write replaces whole (the same chunk of the same file), so no hole can open
    /// (and the small bputs of many small uploads pay nothing: a LIST each cost 5-10 % of them).
    private static func checkWhole(_ blob: BlobID, through end: Int64, in store: any BlockStore) async throws {
        let stored = try await BlockingWork.run { try store.length(of: blob) }
        guard stored >= end else {
            throw UpError(
                .storeUnavailable,
                detail: "block \(blob) reaches \(stored) of \(end) bytes after this chunk: another instance's attempt at "
                    + "the same chunk removed part of it; send the chunk again")
        }
    }

    /// Reads the body (at most `limit` bytes) and compares it with the blob's bytes at `offset`.
    private func compare(_ body: RequestBodyStream, with blob: BlobID, at offset: Int64, limit: Int64) async throws
        -> BlockUpload.Replayed
    {
        var chunk: [UInt8] = []
        for try await piece in body {
            guard Int64(chunk.count + piece.count) <= limit else { return .tooLong }
            chunk += piece
        }
        let store = ingest.store
        let range = offset..<(offset + Int64(chunk.count))
        let stored = try await BlockingWork.run { try store.read(blob, range: range) }
        return .bytes(length: Int64(chunk.count), chunkCRC: CRC32.checksum(chunk), matches: stored == chunk)
    }

    /// Best effort: a cut back the next append at the acknowledged offset repeats anyway, and a
    /// blob no row names is found by the orphan sweep.
    private func undo(_ undo: BlockUpload.Undo, blob: BlobID) async {
        let store = ingest.store
        let hashes = ingest.hashes
        switch undo {
        case .nothing:
            break
        case .cutBack where store.isShared:
            // Not on a store other nodes write to: this process's write lock does not cover
            // them. A client that gave up on this request (its connection looked dead) retries
            // on another node, which may have acknowledged this chunk and the next ones by now;
            // cutting back to this request's offset would remove those acknowledged bytes. An
            // unacknowledged tail of this request's own is removed by the next append at the
            // acknowledged offset, or with the block by the sweep. The block's running SHA-1 here
            // covers this request's bytes: forgotten, so a later chunk on this node rehashes
            // what the store holds instead of trusting bytes no one acknowledged.
            hashes.remove(blob)
        case .cutBack(let offset):
            // While the write lock is still held, so the blob stays what the index says and a
            // full disk gets the space back at once, not at the next chunk.
            _ = try? await BlockingWork.run { try store.append([], to: blob, at: offset) }
        case .discard:
            do {
                try await BlockingWork.run {
                    hashes.remove(blob)
                    try store.remove(blob)
                }
            } catch {
                logger.warning("could not remove blob of a failed mkblk", ["blob": .string(blob.hex)])
            }
        }
    }
}
