/// Random identifiers made of URL-safe characters (`[A-Za-z0-9_-]`), e.g. request and trace ids.
///
/// Not secrets, so the system generator suffices. Each call to it is a `getrandom` system call
/// and yields 64 bits, which cover ten 6-bit characters, so a 16-character id costs two calls
/// (drawing a call per character made id generation a visible share of a request's CPU time).
public enum RandomID {
    /// The 64 characters, indexed by 6 random bits.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `count` random URL-safe characters: 6 bits of randomness each.
    public static func urlSafe(count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var bits: UInt64 = 0
        var charactersLeft = 0  // unused 6-bit groups in `bits`
        for _ in 0..<count {
            if charactersLeft == 0 {
                bits = generator.next()
                charactersLeft = 10
            }
            bytes.append(alphabet[Int(truncatingIfNeeded: bits & 63)])
            bits >>= 6
            charactersLeft -= 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
