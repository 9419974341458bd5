import UpCore

/// Argument checks every index implementation applies, so they refuse the same things.
public enum UpIndexRules {
    /// qiniu-protocol.md §4.1: `blockSize` must be 1…4 MiB.
    public static func checkBlockSize(_ size: Int64) throws {
        guard (1...Int64(QiniuBlock.size)).contains(size) else {
            throw UpIndexError.invalidArgument("block size \(size) outside 1...\(QiniuBlock.size)")
        }
    }

    /// The record of a new block holding its first `received` bytes, checked like an advance
    /// from 0.
    public static func newBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String?? = nil,
        expiresAt: Int64, createdAt: Int64
    ) throws -> BlockRecord {
        try checkBlockSize(blockSize)
        var record = BlockRecord(
            blob: blob, blockSize: blockSize, expiresAt: expiresAt, createdAt: createdAt, sniffedType: sniffedType)
        try checkAdvance(record, from: 0, to: received, sha1: sha1)
        record.offset = received
        record.crc32 = crc32
        record.sha1 = sha1
        return record
    }

    public static func checkAdvance(_ block: BlockRecord, from expected: Int64, to new: Int64, sha1: [UInt8]?) throws {
        guard expected >= 0, new >= expected, new <= block.blockSize else {
            throw UpIndexError.invalidArgument("offset \(expected)→\(new) in a block of \(block.blockSize)")
        }
        guard (sha1 != nil) == (new == block.blockSize), sha1.map({ $0.count == 20 }) ?? true else {
            throw UpIndexError.invalidArgument("a 20-byte SHA-1 is given exactly when the block completes")
        }
    }

    public static func checkPartNumber(_ number: Int) throws {
        guard UploadPart.numbers.contains(number) else {
            throw UpIndexError.invalidArgument("part number \(number) outside 1...10000")
        }
    }

    /// §5 list-parts: default and maximum `max-parts` is 1000.
    public static func clampMaxParts(_ max: Int) -> Int { Swift.max(1, Swift.min(max, 1000)) }

    /// Checks a complete request against the stored parts; returns the parts used, in order.
    public static func matchParts(
        _ references: [PartReference], stored: [Int: UploadPart], segments: [Segment]
    ) throws -> [UploadPart] {
        var used: [UploadPart] = []
        var previous = 0
        for reference in references {
            // §5: strictly ascending; every (partNumber, etag) must match what was stored.
            guard reference.partNumber > previous, let part = stored[reference.partNumber], part.etag == reference.etag
            else { throw UpIndexError.partMismatch(partNumber: reference.partNumber) }
            previous = reference.partNumber
            used.append(part)
        }
        guard used.map(\.segment) == segments else {
            throw UpIndexError.invalidArgument("object segments differ from the completed parts")
        }
        return used
    }

    /// A new random upload id: 16 bytes from `SecureRandom`, hex (no `/`, safe in a path).
    public static func newUploadID() -> String { BlobID.random().hex }
}
