/// Comparisons whose running time does not depend on where two secrets first differ.
public enum ConstantTime {
    /// Returns whether `a` and `b` hold the same bytes, in time that depends only on their lengths.
    ///
    /// Use it for every comparison of a received signature with a computed one. A length
    /// mismatch returns early: lengths of base64 HMACs are public, their contents are not.
    ///
    /// - Parameters:
    ///   - a: First byte sequence (e.g. `signature.utf8`).
    ///   - b: Second byte sequence.
    /// - Returns: `true` when both sequences are byte-for-byte equal.
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
