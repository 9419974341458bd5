import NativeCrypto
import UpCore

/// Where a request body goes, and what is computed in the same pass as it is written — the
/// shapes of `BlobWriter`, the one write pipeline from request body to blob.
struct BlobTarget: Sendable {
    /// The blob layout.
    enum Layout: Sendable, Equatable {
        /// A v1 chunk (qiniu-protocol.md §4.1–4.2): appended to the block's blob from `offset`,
        /// the acknowledged length; the block is `blockSize` long once complete, and is sealed
        /// (fsynced, its SHA-1 finished) when this chunk completes it.
        case block(BlobID, offset: Int64, blockSize: Int64)
        /// One fresh blob of any length, sealed at the end (a v2 part, §5).
        case oneBlob
        /// Fresh blobs of `QiniuBlock.size` each — one per etag block (§7.1), each sealed when
        /// full, the last at the end (a form file, §6; a `/put` body, §4.5): the object is the
        /// manifest of these blobs, like an mkfile's.
        case blocks
    }

    /// The layout.
    var layout: Layout
    /// Most bytes the body may have; `overflow` is thrown before writing the piece that passes it.
    var limit: Int64
    /// What a body longer than `limit` is answered with (400, 413 or 701, by route).
    var overflow: UpError
    /// Also compute the CRC-32 of the body: a v1 chunk's reply and its ctx (§4.1–4.2, §7.3), a
    /// form's or `/put`'s optional `crc32` check. A v2 part does not need it (its integrity is
    /// `Content-MD5` and the etag, §5), so it is asked for, not implied.
    var crc32 = false
    /// Also compute the MD5 of the body (v2 `Content-MD5`, §5).
    var md5 = false
    /// Also compute the etag block digests of the body (§7.1, §7.2: form, put and v2 parts).
    var etag = false
    /// At most how many bytes the body is expected to bring, when the request says (its
    /// `Content-Length`; a form's covers the other fields too): sizes the writer's buffers only,
    /// so a 20 KiB upload does not take two 256 KiB buffers. Never checked: `limit` is the rule.
    var expectedBytes: Int64?
    /// Runs before each append of the body's bytes and may refuse them by throwing (a bput on a
    /// shared store checks that its block has not moved on, `BlockUploadRunner`).
    var beforeAppend: (@Sendable () async throws -> Void)?

    /// The most bytes this body can bring: `limit`, or less when the request said so.
    var bound: Int64 { min(limit, expectedBytes ?? .max) }

    /// Bytes that still fit in the blob being written once `written` bytes of the body are in:
    /// what is left of the 4 MiB blob for `.blocks`, unbounded otherwise.
    func room(after written: Int64) -> Int64 {
        guard layout == .blocks else { return .max }
        return Int64(QiniuBlock.size) - written % Int64(QiniuBlock.size)
    }

    /// Whether the body's first `written` bytes end a blob (`.blocks`: a 4 MiB boundary).
    func endsBlob(at written: Int64) -> Bool {
        layout == .blocks && written > 0 && written % Int64(QiniuBlock.size) == 0
    }

    /// A v1 chunk of the block `record`-like state: `blob` at `offset` of `blockSize`.
    static func chunk(of blob: BlobID, at offset: Int64, blockSize: Int64, overflow: UpError) -> BlobTarget {
        BlobTarget(
            layout: .block(blob, offset: offset, blockSize: blockSize), limit: blockSize - offset, overflow: overflow,
            crc32: true)
    }
}

/// What one body came to. Every byte was written and hashed once, in order.
struct BlobWritten: Sendable, Equatable {
    /// Bytes in the body.
    var count: Int64
    /// CRC-32 of the body (§7.3: the v1 reply's `crc32`, the form's and `/put`'s `crc32` check),
    /// when asked (`BlobTarget.crc32`).
    var crc32: UInt32?
    /// The blobs written, in order (`.oneBlob`, `.blocks`); none for a v1 chunk or an empty body.
    var segments: [Segment]
    /// MD5 of the body, when asked.
    var md5: [UInt8]?
    /// The etag digests of the body, when asked.
    var etag: EtagHasher.Result?
    /// The block's SHA-1 when this v1 chunk completed it (§7.1); nil otherwise.
    var blockSHA1: [UInt8]?
    /// The body's first `MimeSniffer.windowSize` bytes (§1.3 detectMime, mimeLimit).
    var head: [UInt8]
}
