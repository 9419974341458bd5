import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// Carries out a `BlockUpload`'s actions for one mkblk or bput request: streams the body into the
/// blob, reads and compares, writes the index, undoes, answers. Every decision is the machine's.
struct BlockUploadRunner: Sendable {
    let blocks: any BlockIndex
    let blobs: any BlockStore
    let hashes: BlockHashCache
    let contexts: BlockContexts
    /// `UpServerConfiguration.syncEveryChunk`.
    let syncEveryChunk: Bool
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
                    event = try await perform(action, blob: machine.blob, body: body)
                } catch {
                    failure = error
                    event = .failed(superseded: Task.isCancelled)
                }
                action = machine.handle(event)
            }
        }
    }

    private func perform(_ action: BlockUpload.Action, blob: BlobID, body: RequestBodyStream) async throws
        -> BlockUpload.Event
    {
        switch action {
        case .rewind(let from, let to, let crc32):
            return .rewound(try await blocks.rewindBlock(blob, from: from, to: to, crc32: crc32))
        case .write(let offset, let blockSize, let resumingCRC, let overflow):
            let writer = ChunkWriter(store: blobs, hashes: hashes, metrics: metrics)
            let written = try await writer.write(
                body, to: blob, at: offset, capacity: blockSize - offset, resumingCRC: resumingCRC, overflow: overflow)
            let end = offset + written.count
            let sha1 = try await writer.seal(
                blob, length: end, complete: end == blockSize, syncEveryChunk: syncEveryChunk)
            return .written(.init(count: written.count, chunkCRC: written.chunkCRC, blockCRC: written.blockCRC, sha1: sha1))
        case .compare(let offset, let limit):
            return .replayed(try await compare(body, with: blob, at: offset, limit: limit))
        case .create(let record):
            _ = try await blocks.createBlock(
                blob, blockSize: record.blockSize, received: record.offset, crc32: record.crc32, sha1: record.sha1,
                expiresAt: record.expiresAt, createdAt: record.createdAt)
            return .recorded(true)
        case .advance(let from, let record):
            return .recorded(
                try await blocks.advanceBlock(blob, from: from, to: record.offset, crc32: record.crc32, sha1: record.sha1))
        case .reply, .undo:
            preconditionFailure("answers are not steps")
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
        let store = blobs
        let range = offset..<(offset + Int64(chunk.count))
        let stored = try await BlockingWork.run { try store.read(blob, range: range) }
        return .bytes(length: Int64(chunk.count), chunkCRC: CRC32.checksum(chunk), matches: stored == chunk)
    }

    /// Best effort: a cut back the next append at the acknowledged offset repeats anyway, and a
    /// blob no row names is found by the orphan sweep.
    private func undo(_ undo: BlockUpload.Undo, blob: BlobID) async {
        let store = blobs
        let hashes = self.hashes
        switch undo {
        case .nothing:
            break
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
