public import NativeCrypto

/// The v1 `ctx` (qiniu-protocol.md §4.1–4.3; DESIGN.md "Rules of the protocol that are ours to
/// choose"): a self-verifying token naming one block upload and how far it got.
///
/// Any up-server node that shares the secret (and the block storage) accepts the next `bput` or
/// the `mkfile`, with no lookup table. The ctx is never bound to the upload token, so `mkfile`
/// may arrive with a fresh token (§1.2 step 3).
///
/// Wire form: `B64(version ‖ body ‖ HMAC-SHA1(secret, label ‖ version ‖ body))`, padded URL-safe
/// base64, so only `[A-Za-z0-9_=-]` — no `,` `/` `?` (§4.2). Version 1 body, big-endian:
///
/// | bytes | field |
/// |---|---|
/// | 1 | length *n* of ``blockID`` (1…``maxBlockIDLength``) |
/// | *n* | ``blockID`` |
/// | 4 | ``blockSize`` |
/// | 4 | ``offset`` |
/// | 4 | ``crc32`` |
/// | 8 | ``expiresAt`` (signed) |
///
/// The MAC input starts with a fixed label, so a MAC made with the same secret for another
/// purpose (e.g. an upload token signed with a SecretKey) can never pass as a ctx.
public struct BlockContext: Sendable, Hashable {
    /// The format version written by ``encode(mac:)``; the first byte of every ctx.
    public static let version: UInt8 = 1
    /// The longest ``blockID`` the format carries.
    public static let maxBlockIDLength = 64

    /// Server-chosen opaque id of the block upload (e.g. 16 random bytes; randomness is the
    /// caller's — UpCore is pure).
    public let blockID: [UInt8]
    /// Declared size of the block (`/mkblk/<blockSize>`), 1…``QiniuBlock/size``.
    public let blockSize: Int
    /// Bytes of the block received so far, 0…``blockSize``: the next `bput` must start here (§4.2).
    public let offset: Int
    /// CRC-32 (§7.3) of the block's first ``offset`` bytes.
    public let crc32: UInt32
    /// Unix seconds; the ctx is valid while `now <= expiresAt` and advertised as `expired_at`
    /// (§4.2: never invalidate a ctx before its advertised expiry).
    public let expiresAt: Int64

    /// Creates a ctx. The values come from the server itself, so out-of-range values are
    /// programming errors (preconditions), not client errors.
    ///
    /// - Parameters:
    ///   - blockID: 1…``maxBlockIDLength`` bytes.
    ///   - blockSize: 1…``QiniuBlock/size``.
    ///   - offset: 0…`blockSize`.
    ///   - crc32: CRC-32 of the first `offset` bytes.
    ///   - expiresAt: Last valid Unix second.
    public init(blockID: [UInt8], blockSize: Int, offset: Int, crc32: UInt32, expiresAt: Int64) {
        precondition((1...Self.maxBlockIDLength).contains(blockID.count), "blockID length \(blockID.count)")
        precondition((1...QiniuBlock.size).contains(blockSize), "blockSize \(blockSize)")
        precondition((0...blockSize).contains(offset), "offset \(offset) of \(blockSize)")
        self.blockID = blockID
        self.blockSize = blockSize
        self.offset = offset
        self.crc32 = crc32
        self.expiresAt = expiresAt
    }

    /// Whether every byte of the block has arrived (`offset == blockSize`) — required of each
    /// ctx listed in `mkfile` (§4.3).
    public var isComplete: Bool { offset == blockSize }

    /// Encodes and signs the ctx.
    ///
    /// - Parameter mac: HMAC-SHA1 prepared with the server's ctx secret.
    /// - Returns: The ctx text, `[A-Za-z0-9_=-]` only.
    public func encode(mac: HMACSHA1) -> String {
        var bytes = [Self.version, UInt8(blockID.count)] + blockID
        Self.append(UInt64(UInt32(blockSize)), bytes: 4, to: &bytes)
        Self.append(UInt64(UInt32(offset)), bytes: 4, to: &bytes)
        Self.append(UInt64(crc32), bytes: 4, to: &bytes)
        Self.append(UInt64(bitPattern: expiresAt), bytes: 8, to: &bytes)
        bytes += mac.authenticationCode(forParts: [Self.label, bytes])
        return URLSafeBase64.encode(bytes)
    }

    /// Decodes and authenticates a ctx received from a client (`bput` path, `mkfile` body).
    ///
    /// The MAC is checked (constant time) before any field is trusted; then the version, the
    /// field ranges, and `now <= expiresAt`.
    ///
    /// - Parameters:
    ///   - text: The ctx as received.
    ///   - mac: HMAC-SHA1 prepared with the server's ctx secret.
    ///   - now: Current Unix time in seconds.
    /// - Returns: The verified ctx.
    /// - Throws: ``UpError`` `.invalidContext` (701) when malformed, forged, of an unknown
    ///   version, or expired; `detail` says which.
    public static func decode(_ text: some StringProtocol, mac: HMACSHA1, now: Int64) throws(UpError) -> BlockContext {
        guard let bytes = URLSafeBase64.decode(text) else {
            throw UpError(.invalidContext, detail: "ctx is not base64")
        }
        // Smallest: version, id length, 1-byte id, 20 bytes of fields, MAC.
        guard bytes.count >= 3 + fieldsLength + HMACSHA1.byteCount else {
            throw UpError(.invalidContext, detail: "ctx too short (\(bytes.count) bytes)")
        }
        let signedEnd = bytes.count - HMACSHA1.byteCount
        let signed = Array(bytes[..<signedEnd])
        guard ConstantTime.equals(bytes[signedEnd...], mac.authenticationCode(forParts: [label, signed])) else {
            throw UpError(.invalidContext, detail: "ctx MAC mismatch")
        }
        guard signed[0] == version else {
            throw UpError(.invalidContext, detail: "ctx version \(signed[0])")
        }
        let idLength = Int(signed[1])
        guard (1...maxBlockIDLength).contains(idLength), signed.count == 2 + idLength + fieldsLength else {
            throw UpError(.invalidContext, detail: "ctx length \(signed.count) for id length \(idLength)")
        }
        var index = 2 + idLength
        let blockSize = Int(read(signed, at: &index, bytes: 4))
        let offset = Int(read(signed, at: &index, bytes: 4))
        let crc = UInt32(read(signed, at: &index, bytes: 4))
        let expiresAt = Int64(bitPattern: read(signed, at: &index, bytes: 8))
        guard (1...QiniuBlock.size).contains(blockSize), (0...blockSize).contains(offset) else {
            throw UpError(.invalidContext, detail: "ctx offset \(offset) / block size \(blockSize) out of range")
        }
        guard now <= expiresAt else {
            throw UpError(.invalidContext, detail: "ctx expired at \(expiresAt), now \(now)")
        }
        return BlockContext(
            blockID: Array(signed[2..<(2 + idLength)]), blockSize: blockSize, offset: offset, crc32: crc,
            expiresAt: expiresAt)
    }

    /// Domain separation for the MAC: ctx MACs never collide with other uses of the secret.
    private static let label = Array("upgate-ctx\0".utf8)
    /// blockSize, offset, crc32, expiresAt.
    private static let fieldsLength = 4 + 4 + 4 + 8

    private static func append(_ value: UInt64, bytes count: Int, to output: inout [UInt8]) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func read(_ bytes: [UInt8], at index: inout Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in bytes[index..<(index + count)] { value = value << 8 | UInt64(byte) }
        index += count
        return value
    }
}
