import NativeCrypto
import UpCore

/// Issues and checks the ctx values of v1 blocks (DESIGN.md: ctx is self-verifying): the MAC
/// under the server's ctx secret, how long a new block's ctx lives, and the base URL every
/// mkblk/bput reply names as `host` (qiniu-protocol.md §4.2).
struct BlockContexts: Sendable {
    /// Authenticates ctx values; every node sharing storage shares the secret.
    let mac: HMACSHA1
    /// Seconds a new block's ctx stays valid (`contextLifetimeSeconds`).
    let lifetimeSeconds: Int64
    /// The externally reachable base URL, no trailing slash.
    let baseURL: @Sendable () -> String

    /// The verified ctx of `text` at `now`.
    ///
    /// - Throws: `UpError(.invalidContext)` (701) for a forged, malformed or expired ctx.
    func decode(_ text: String, now: Int64) throws(UpError) -> BlockContext {
        try BlockContext.decode(text, mac: mac, now: now)
    }

    /// The signed ctx for `record` (its state after a chunk).
    func encode(_ record: BlockRecord) -> String {
        BlockContext(
            blockID: Self.blockID(of: record.blob), blockSize: Int(record.blockSize), offset: Int(record.offset),
            crc32: record.crc32, expiresAt: record.expiresAt
        ).encode(mac: mac)
    }

    /// The ctx's block id: the blob's 16 random bytes.
    static func blockID(of blob: BlobID) -> [UInt8] { Hex.decode(blob.hex) ?? [] }

    /// The blob a verified ctx names; `nil` if its id is not a blob id (cannot happen for a ctx
    /// this server signed, but the id is still only bytes).
    static func blob(of context: BlockContext) -> BlobID? {
        guard context.blockID.count == BlobID.byteCount else { return nil }
        return BlobID(hex: Hex.encode(context.blockID))
    }
}
