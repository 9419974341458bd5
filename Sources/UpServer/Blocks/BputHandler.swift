import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// `POST /bput/<ctx>/<nextChunkOffset>`: appends the next chunk of a v1 block
/// (qiniu-protocol.md §4.2).
///
/// The ctx is self-verifying (DESIGN.md): its MAC and expiry are checked before anything is
/// touched, then the block row is the authority on how far the block got. 701 for a forged,
/// malformed or expired ctx, an offset in the path that differs from the ctx's, a ctx whose row
/// is gone, and a chunk that would overflow the block. An older ctx of an incomplete block is
/// accepted: the block is rewound to it (see `UpIndex.rewindBlock`); an older ctx of a complete
/// block is answered without touching it when its chunk repeats the stored bytes (`replay`).
///
/// Concurrency: the blob is held in `BlobWriteLocks` across "check offset → append → advance",
/// because `append` truncates past the acknowledged offset and two writers would cut each
/// other's bytes. A second request for the same block TAKES OVER from one still running
/// (`BlobWriteLocks.takeOver`): the earlier one was never acknowledged and its client has given
/// up on it — typically its connection died, which libmicrohttpd may only notice at its
/// connection timeout — so the newcomer should not wait for that. If the earlier one did finish
/// first, the newcomer gets 701 (offset moved), exactly as a late duplicate would.
struct BputHandler: Sendable {
    let services: UpServices

    /// Handles one request.
    func handle(_ request: Request) async throws -> Response {
        let now = services.now
        // §1.2 step 3: intermediate steps reject an expired token too.
        let token = try services.authorizer.authorize(header: request.headers["Authorization"], now: now)
        let path = try BputPath.parse(request.path)
        let context = try BlockContext.decode(path.context, mac: services.contextMAC, now: now)
        guard path.offset == context.offset else {
            throw UpError(.invalidContext, detail: "bput offset \(path.offset), ctx offset \(context.offset)")
        }
        guard let blob = V1Request.blob(of: context) else {
            throw UpError(.invalidContext, detail: "ctx block id is not a blob id")
        }
        try token.policy.checkSize(Int64(context.blockSize), isFinal: false)
        let capacity = Int64(context.blockSize - context.offset)
        if let declared = V1Request.contentLength(request), declared > capacity {
            throw UpError(.invalidContext, detail: "chunk of \(declared) bytes overflows the block (\(capacity) left)")
        }
        do {
            return try await services.locks.takeOver(blob) {
                try await append(request, to: blob, context: context)
            }
        } catch is CancellationError {
            throw UpError(.chunkSuperseded, detail: "chunk for block \(blob) superseded by a newer request")
        }
    }

    /// The locked step: check the row, stream the chunk, seal a completed block, advance.
    private func append(_ request: Request, to blob: BlobID, context: BlockContext) async throws -> Response {
        guard var record = try await services.index.block(blob) else {
            throw UpError(.invalidContext, detail: "block \(blob) unknown (never created or swept)")
        }
        let stale = "stale ctx: block at \(record.offset)/\(record.blockSize), ctx at \(context.offset)/\(context.blockSize)"
        guard record.blockSize == Int64(context.blockSize), record.offset >= Int64(context.offset) else {
            throw UpError(.invalidContext, detail: stale)
        }
        if record.offset == Int64(context.offset) && record.crc32 != context.crc32 {
            // Same offset, other bytes: this ctx belongs to a history the block was rewound away
            // from (a later ctx than the one the client resumed with). Its chunk would not follow.
            throw UpError(.invalidContext, detail: stale + " (crc differs: rewound)")
        }
        if record.offset > Int64(context.offset) && record.offset == record.blockSize {
            return try await replay(request, to: blob, record: record, context: context)
        }
        if record.offset > Int64(context.offset) {
            // The client resumes from an older, authentic ctx: it never got the reply for what came
            // after (it was killed mid-chunk). Carry on from its offset rather than make it resend
            // the whole block (701). (A complete block is never rewound: see `replay` above.)
            guard
                try await services.index.rewindBlock(
                    blob, from: record.offset, to: Int64(context.offset), crc32: context.crc32)
            else { throw UpError(.invalidContext, detail: stale) }
            record.offset = Int64(context.offset)
            record.crc32 = context.crc32
        }
        let capacity = record.blockSize - record.offset
        guard capacity > 0 else { throw UpError(.invalidContext, detail: "block \(blob) is already complete") }
        let writer = ChunkWriter(store: services.store, hashes: services.hashes, metrics: services.metrics)
        let written: ChunkWriter.Written
        let newOffset: Int64
        let sha1: [UInt8]?
        let advanced: Bool
        do {
            written = try await writer.write(
                request.bodyStream, to: blob, at: record.offset, capacity: capacity, resumingCRC: record.crc32,
                overflow: UpError(.invalidContext, detail: "chunk overflows block \(blob) (\(capacity) bytes left)"))
            newOffset = record.offset + written.count
            sha1 = try await writer.seal(
                blob, length: newOffset, complete: newOffset == record.blockSize,
                syncEveryChunk: services.configuration.syncEveryChunk)
            advanced = try await services.index.advanceBlock(
                blob, from: record.offset, to: newOffset, crc32: written.blockCRC, sha1: sha1)
        } catch {
            await cutBack(blob, to: record.offset)
            throw error
        }
        guard advanced else {
            // Only another node sharing the index can get here (this one holds the write lock).
            throw UpError(.invalidContext, detail: "block \(blob) moved on during the chunk")
        }
        var moved = record
        moved.offset = newOffset
        moved.crc32 = written.blockCRC
        moved.sha1 = sha1
        return BlockReply.make(
            record: moved, blockID: context.blockID, chunkCRC: written.chunkCRC, services: services
        ).response
    }

    /// A chunk that failed (a full disk after its first flushes, the index refusing the
    /// advance, the client gone) leaves bytes past the acknowledged `offset`: cut them off while
    /// the write lock is still held, so the blob stays what the index says and a full disk gets
    /// the space back at once, not at the next chunk. Best effort: the next append at `offset`
    /// truncates anyway.
    private func cutBack(_ blob: BlobID, to offset: Int64) async {
        let store = services.store
        _ = try? await BlockingWork.run { try store.append([], to: blob, at: offset) }
    }
}

extension UpError.Code {
    /// 599 to a bput taken over by a newer request for the same block: its client gave up on it
    /// (the newer request is typically its retry), so it is no server failure. Same status and
    /// text as ``internalError`` (the SDKs retry 599); a name of its own keeps it out of the error
    /// log and apart in the metrics.
    static let chunkSuperseded = UpError.Code(status: 599, message: "server operation failed", name: "chunk_superseded")
}
