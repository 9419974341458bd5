internal import CZlib
#if os(Linux)
internal import CISAL
#endif

/// CRC-32 (IEEE 802.3 / zlib, reflected) — not CRC-32C. qiniu-protocol.md §7.3.
///
/// Incremental: `update` as bytes arrive; `value` is the unsigned CRC of everything so far, the
/// same number the Python SDK prints (`zlib.crc32(x) & 0xffffffff`).
///
/// Every uploaded byte passes through it on both ends, so on Linux the bytes go to ISA-L's
/// `crc32_gzip_refl` (carry-less multiply; ~0.09 CPU-s per GiB here against zlib's ~0.30), which
/// computes the same function with the same pre- and post-inversion. zlib is the fallback
/// elsewhere and still does ``combine``.
public struct CRC32: Sendable, Hashable {
    /// The CRC of all bytes fed so far (0 for none).
    public private(set) var value: UInt32 = 0

    /// Starts at the CRC of no bytes.
    public init() {}

    /// Continues a CRC computed earlier: feeding the rest of the bytes then gives the CRC of the
    /// whole. A v1 ctx carries the block's CRC so far (UpCore `BlockContext`), so the node that
    /// takes the next chunk need not re-read the block file.
    ///
    /// - Parameter value: ``value`` of the bytes already fed.
    public init(resuming value: UInt32) {
        self.value = value
    }

    /// Feeds `bytes`.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ unsafe update(buffer: UnsafeRawBufferPointer($0)) }) == nil {
            unsafe Array(bytes).withUnsafeBytes { unsafe update(buffer: $0) }
        }
    }

    private mutating func update(buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        let base = unsafe buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        #if os(Linux)
        value = unsafe crc32_gzip_refl(value, base, UInt64(buffer.count))
        #else
        value = UInt32(truncatingIfNeeded: unsafe crc32_z(UInt(value), base, buffer.count))
        #endif
    }

    /// The CRC-32 of two byte strings back to back, from the CRC of each: lets a writer CRC a
    /// chunk once and still extend the block's running CRC (zlib `crc32_combine`, whose `z_off_t` is 64-bit here, O(log n)).
    ///
    /// - Parameters:
    ///   - first: CRC-32 of the leading bytes.
    ///   - second: CRC-32 of the trailing bytes.
    ///   - length: Count of the trailing bytes.
    public static func combine(_ first: UInt32, _ second: UInt32, length: Int64) -> UInt32 {
        precondition(length >= 0, "length must not be negative")
        guard length > 0 else { return first }
        return UInt32(truncatingIfNeeded: crc32_combine(UInt(first), UInt(second), Int(length)))
    }

    /// Returns the CRC-32 of `bytes`.
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }
}
