import Synchronization

/// Random identifiers made of URL-safe characters (`[A-Za-z0-9_-]`): request, trace and message
/// ids, which must be unique and evenly spread, and are not secrets (they appear in response
/// headers and logs). Never use them where guessing one would matter.
///
/// The bits come from SplitMix64 over a process-wide counter started at a random key drawn
/// once from the system generator: no system call per id (drawing from the system generator
/// each time made `getrandom` 4 of the 6 system calls of a token request, about 4 % of its
/// CPU time). The mix is a bijection of the counter, so within a process two ids never share
/// their first ten characters' source word.
public enum RandomID {
    /// The 64 characters, indexed by 6 random bits.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Where this process's sequence starts.
    private static let key: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()

    /// Words drawn so far.
    private static let drawn = Atomic<UInt64>(0)

    /// `count` random URL-safe characters: 6 bits of randomness each.
    public static func urlSafe(count: Int) -> String {
        guard count > 0 else { return "" }
        // Ten 6-bit characters per 64-bit word; take all of this id's words in one step.
        let words = UInt64((count + 9) / 10)
        var index = drawn.wrappingAdd(words, ordering: .relaxed).oldValue
        // Written straight into the string's storage: one allocation per id, not two.
        return unsafe String(unsafeUninitializedCapacity: count) { buffer in
            var bits: UInt64 = 0
            for position in 0..<count {
                if position % 10 == 0 {
                    bits = mix(key &+ index &* 0x9E37_79B9_7F4A_7C15)
                    index &+= 1
                }
                unsafe buffer[position] = alphabet[Int(truncatingIfNeeded: bits & 63)]
                bits >>= 6
            }
            return count
        }
    }

    /// SplitMix64's output function (Steele, Lea, Flood 2014): a bijection with full avalanche.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
