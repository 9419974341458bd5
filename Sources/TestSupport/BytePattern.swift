/// A deterministic byte pattern for large-body tests: each 1 KiB run holds one value derived
/// from its offset and a seed, so misplaced or lost bytes change the bytes, and making 64 MiB is
/// cheap in a debug build (one fill per KiB).
public enum BytePattern {
    /// The pattern's bytes at `range` for `seed`.
    public static func bytes(_ range: Range<Int>, seed: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let runEnd = min(range.upperBound, (offset / 1024 + 1) * 1024)
            let value = UInt8(truncatingIfNeeded: (offset / 1024) &* 131 &+ seed &* 7 &+ 1)
            out.append(contentsOf: [UInt8](repeating: value, count: runEnd - offset))
            offset = runEnd
        }
        return out
    }
}
