import HTTPKit
import NativeCrypto
import UpCore

extension BputHandler {
    /// A chunk sent with an older ctx of a COMPLETE block: the client lost the replies for the
    /// chunks after that ctx (killed mid-upload, connection cut after the server had stored the
    /// chunk) and resends from what it holds.
    ///
    /// A complete block is never rewound — an mkfile may be assembling it right now — so the
    /// block is left exactly as it is and the chunk is checked instead: if its bytes equal the
    /// stored bytes at the ctx's offset, the answer is the ctx the block had after them (offset
    /// and CRC-32 advanced over the chunk; the final ctx once the chunk reaches the end), as if
    /// the chunk had been written again. The client then carries on chunk by chunk to the block's
    /// final ctx instead of redoing the whole 4 MiB block after a 701. Anything else — other
    /// bytes, a chunk past the block's end — is the 701 it was before.
    func replay(_ request: Request, to blob: BlobID, record: BlockRecord, context: BlockContext) async throws
        -> Response
    {
        let start = Int64(context.offset)
        let stale = UpError(.invalidContext, detail: "stale ctx of complete block \(blob): chunk differs from the stored bytes")
        let limit = Int(record.blockSize - start)
        var chunk: [UInt8] = []
        for try await piece in request.bodyStream {
            guard chunk.count + piece.count <= limit else { throw stale }
            chunk += piece
        }
        guard !chunk.isEmpty else { throw stale }
        let store = services.store
        let range = start..<(start + Int64(chunk.count))
        let stored = try await BlockingWork.run { try store.read(blob, range: range) }
        guard stored == chunk else { throw stale }

        var blockCRC = CRC32(resuming: context.crc32)
        blockCRC.update(chunk)
        var replayed = record
        replayed.offset = range.upperBound
        replayed.crc32 = blockCRC.value
        if replayed.offset < record.blockSize { replayed.sha1 = nil }
        guard replayed.offset < record.blockSize || replayed.crc32 == record.crc32 else { throw stale }
        return BlockReply.make(
            record: replayed, blockID: context.blockID, chunkCRC: CRC32.checksum(chunk), services: services
        ).response
    }
}
