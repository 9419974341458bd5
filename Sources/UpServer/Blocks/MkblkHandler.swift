import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// `POST /mkblk/<blockSize>`: starts a v1 block with its first chunk (qiniu-protocol.md §4.1).
///
/// Order: token (401/631), path (400), size limit (413), then the body is streamed into a fresh
/// blob; only when every byte is written (and, for a complete block, fsynced and hashed) is the
/// block row created (holding the chunk), and only then is the ctx issued — "acknowledged means
/// stored" (DESIGN.md). The row is created after the bytes so a failed or oversized request
/// leaves no row behind: its blob is removed at once (and a crash in between leaves an orphan
/// blob, which the orphan sweep finds). No `BlobWriteLocks` are needed: nobody else knows the
/// new blob's id before the reply.
struct MkblkHandler: Sendable {
    let services: UpServices

    /// Handles one request.
    func handle(_ request: Request) async throws -> Response {
        let token = try services.authorizer.authorize(header: request.headers["Authorization"], now: services.now)
        let path = try MkblkPath.parse(request.path)
        let blockSize = Int64(path.blockSize)
        // §1.3 fsizeLimit "at mkblk time too (cumulative)": v1 has no upload id tying blocks
        // together, so the one total known here is this block's size; mkfile checks the sum.
        try token.policy.checkSize(blockSize, isFinal: false)
        if let declared = V1Request.contentLength(request), declared > blockSize {
            throw UpError(.badRequest, detail: "first chunk of \(declared) bytes > blockSize \(blockSize)")
        }

        let store = services.store
        let blob = try await BlockingWork.run { try store.create() }
        let writer = ChunkWriter(store: store, hashes: services.hashes, metrics: services.metrics)
        let written: ChunkWriter.Written
        let sha1: [UInt8]?
        let record: BlockRecord
        do {
            written = try await writer.write(
                request.bodyStream, to: blob, at: 0, capacity: blockSize, resumingCRC: 0,
                overflow: UpError(.badRequest, detail: "first chunk longer than blockSize \(blockSize)"))
            sha1 = try await writer.seal(
                blob, length: written.count, complete: written.count == blockSize,
                syncEveryChunk: services.configuration.syncEveryChunk)
            let now = services.now
            // The row is born holding the first chunk: one index write, so a full disk
            // (insufficient storage) or a crash between two writes cannot leave a row whose blob
            // this catch has just removed.
            record = try await services.index.createBlock(
                blob, blockSize: blockSize, received: written.count, crc32: written.blockCRC, sha1: sha1,
                expiresAt: now + services.configuration.contextLifetimeSeconds, createdAt: now)
        } catch {
            await discard(blob)
            throw error
        }
        return BlockReply.make(
            record: record, blockID: V1Request.blockID(of: blob), chunkCRC: written.chunkCRC, services: services
        ).response
    }

    /// Removes a blob whose request failed before it got a row; best effort (the orphan sweep
    /// finds what this misses).
    private func discard(_ blob: BlobID) async {
        let store = services.store
        let hashes = services.hashes
        do {
            try await BlockingWork.run {
                hashes.remove(blob)
                try store.remove(blob)
            }
        } catch {
            services.logger.warning("could not remove blob of a failed mkblk", ["blob": .string(blob.hex)])
        }
    }
}
