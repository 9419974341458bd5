/// One pass over a buffer for several digests: the buffer is walked in slices of ``size`` bytes
/// and every digest takes a slice before the next is read, so each byte is fetched from memory
/// once and the other digests find it in cache — not one full pass over a 4 MiB chunk per digest
/// (issue 14: the client's CPU goes to hashing). Used for a v1 chunk's CRC-32 and block SHA-1,
/// and a v2 part's MD5 and etag SHA-1.
enum HashSlices {
    /// Slice length: small enough to stay in a core's L2 cache while each digest reads it.
    static let size = 128 << 10

    /// Calls `body` with consecutive slices of `bytes` (≤ ``size`` each), in order.
    static func forEach<E: Error>(_ bytes: [UInt8], _ body: (ArraySlice<UInt8>) throws(E) -> Void) throws(E) {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size)
            try body(bytes[start..<end])
            start = end
        }
    }
}
