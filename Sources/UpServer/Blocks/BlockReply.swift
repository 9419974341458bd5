import HTTPKit
import JSONText
import NativeCrypto
import UpCore

/// The answer to `mkblk` and `bput` (qiniu-protocol.md §4.1–4.2):
/// `{"ctx","checksum","crc32","offset","host","expired_at"}`.
struct BlockReply: Equatable {
    /// The new ctx, `[A-Za-z0-9_=-]` only.
    var context: String
    /// B64 SHA-1 of the block. Only known cheaply once the block is complete (the running
    /// SHA-1 lives in `BlockHashCache` and cannot be read without finishing it), so it is `""`
    /// while the block is incomplete; clients ignore it (§9.3: Python reads `ctx`, `crc32`,
    /// `expired_at`; `checksum` is informational, §4.2).
    var checksum: String
    /// Unsigned CRC-32 of this request body (§7.3; Python drops the block on mismatch, §9.5).
    var crc32: UInt32
    /// Bytes of the block received so far.
    var offset: Int64
    /// The up-server's base URL for the next call (older go-sdk builds `host + "/bput/..."`).
    var host: String
    /// Unix seconds until which the ctx is honoured (Python's resume record keeps it, §9.4).
    var expiredAt: Int64

    /// The 200 response, JSON, `Cache-Control: no-store`.
    var response: Response {
        var out = "{\"ctx\":"
        JSONText.appendString(context, to: &out)
        out += ",\"checksum\":"
        JSONText.appendString(checksum, to: &out)
        out += ",\"crc32\":\(crc32),\"offset\":\(offset),\"host\":"
        JSONText.appendString(host, to: &out)
        out += ",\"expired_at\":\(expiredAt)}"
        return Response.json(raw: Array(out.utf8), headers: ["Cache-Control": "no-store"])
    }

    /// The reply for `record` after a chunk: signs the ctx with the block's state.
    ///
    /// - Parameters:
    ///   - record: The block row as advanced (offset, CRC, SHA-1, expiry).
    ///   - chunkCRC: CRC-32 of this request body.
    ///   - contexts: The ctx MAC and the base URL.
    static func make(record: BlockRecord, chunkCRC: UInt32, contexts: BlockContexts) -> BlockReply {
        BlockReply(
            context: contexts.encode(record), checksum: record.sha1.map { URLSafeBase64.encode($0) } ?? "",
            crc32: chunkCRC, offset: record.offset, host: contexts.baseURL(), expiredAt: record.expiresAt)
    }
}
