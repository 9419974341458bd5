import NativeCrypto
import UpCore

/// The blocks named by an `mkfile` ctx list, checked and put in order (qiniu-protocol.md §4.3).
struct BlockAssembly: Sendable {
    /// The blocks' blobs, in file order: the object's manifest (`StoredObject.segments`).
    var segments: [Segment]
    /// The v1 etag from the blocks' SHA-1s (§7.1).
    var etag: String
    /// The sum of the block sizes (== the declared fsize).
    var fsize: Int64
    /// The latest `expired_at` among the ctxs: after it a repeat of this mkfile gets 701 anyway
    /// (§9.6), so the completion record need not outlive it.
    var latestExpiry: Int64
    /// MIME type sniffed from the first block's first bytes (§1.3 detectMime / mimeLimit); nil
    /// when not asked for.
    var sniffedMimeType: String?

    /// Checks `contexts` against `fsize` and the index, in this order:
    ///
    /// 1. every ctx authentic and unexpired, else 701 (§4.3 "expired/unknown ctx → 701");
    /// 2. every ctx complete (offset == its blockSize), every block but the last exactly 4 MiB,
    ///    and the sizes summing to `fsize`, else 400 — this is what surfaces the Python SDK's
    ///    silently dropped blocks (§9.5: a crc mismatch leaves a block out, even every block,
    ///    which arrives as an empty list). An empty list is accepted only with `fsize` 0 and
    ///    makes an empty object ([ambiguous] in §4.3; Python never sends it, and the empty
    ///    object's etag is well defined, §7.1);
    /// 3. every block row present and complete with its SHA-1, else 701: the ctx is authentic
    ///    but its block is gone (swept) or not where the ctx says.
    ///
    /// - Parameters:
    ///   - contexts: The ctx texts from the body, in file order.
    ///   - fsize: The declared size from the path.
    ///   - signer: Checks the ctxs.
    ///   - blocks: Where the blocks' rows are.
    ///   - blobs: Where the first block's bytes are sniffed.
    ///   - sniff: Whether to read and sniff them (``MimeResolution/needsSniffedType(detectMime:mimeLimit:clientMimeType:fname:key:)``).
    ///   - now: Unix seconds, for ctx expiry.
    static func assemble(
        contexts: [String], fsize: Int64, signer: BlockContexts, blocks: any BlockIndex, blobs: any BlockStore,
        sniff: Bool, now: Int64
    ) async throws
        -> BlockAssembly
    {
        var decoded: [BlockContext] = []
        decoded.reserveCapacity(contexts.count)
        for (position, text) in contexts.enumerated() {
            do {
                decoded.append(try signer.decode(text, now: now))
            } catch {
                throw UpError(error.code, detail: "mkfile ctx \(position + 1): \(error.detail)")
            }
        }
        let total = try checkSizes(decoded, fsize: fsize)

        var segments: [Segment] = []
        var digests: [[UInt8]] = []
        var firstSniffed: String?? = nil
        segments.reserveCapacity(decoded.count)
        digests.reserveCapacity(decoded.count)
        for (position, context) in decoded.enumerated() {
            guard let blob = BlockContexts.blob(of: context), let record = try await blocks.block(blob) else {
                throw UpError(.invalidContext, detail: "mkfile ctx \(position + 1): block unknown or swept")
            }
            guard record.blockSize == Int64(context.blockSize), record.isComplete, let sha1 = record.sha1 else {
                throw UpError(
                    .invalidContext,
                    detail: "mkfile ctx \(position + 1): block at \(record.offset)/\(record.blockSize), ctx complete")
            }
            segments.append(Segment(blob: blob, length: record.blockSize))
            digests.append(sha1)
            if position == 0 { firstSniffed = record.sniffedType }
        }
        var sniffed: String?
        if sniff, let first = segments.first { sniffed = try await blobs.sniffedType(of: first, recorded: firstSniffed) }
        return BlockAssembly(
            segments: segments, etag: Etag.fromBlockDigests(digests), fsize: total,
            latestExpiry: decoded.map(\.expiresAt).max() ?? now, sniffedMimeType: sniffed)
    }

    /// Step 2 above; returns the total size.
    private static func checkSizes(_ blocks: [BlockContext], fsize: Int64) throws(UpError) -> Int64 {
        var total: Int64 = 0
        for (position, block) in blocks.enumerated() {
            guard block.isComplete else {
                throw UpError(
                    .badRequest, detail: "mkfile ctx \(position + 1) is incomplete (\(block.offset)/\(block.blockSize))")
            }
            guard position == blocks.count - 1 || block.blockSize == QiniuBlock.size else {
                throw UpError(
                    .badRequest, detail: "mkfile block \(position + 1) has \(block.blockSize) bytes, not 4 MiB")
            }
            total += Int64(block.blockSize)
        }
        guard total == fsize else {
            throw UpError(.badRequest, detail: "mkfile fsize \(fsize) but \(blocks.count) blocks hold \(total) bytes")
        }
        return total
    }
}
