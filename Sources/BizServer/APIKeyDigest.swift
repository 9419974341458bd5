import NativeCrypto

/// The SHA-256 of an API key as four words: the form ``ClientDirectory`` looks configured keys
/// up by. Hashing and comparing it costs a few instructions per word, where the 64-character
/// hex `String` it replaced was hashed byte by byte on every token request (and had to be
/// hex-encoded first).
struct APIKeyDigest: Hashable, Sendable {
    private let a: UInt64, b: UInt64, c: UInt64, d: UInt64

    /// The digest of `apiKey` (``BizServerConfiguration/apiKeyDigest(_:)``).
    init(of apiKey: String) {
        self.init(bytes: BizServerConfiguration.apiKeyDigest(apiKey))
    }

    /// A digest given as hex (`apiKeySHA256`); nil unless it is 64 hex digits.
    init?(hex: String) {
        guard let bytes = Hex.decode(hex), bytes.count == 32 else { return nil }
        self.init(bytes: bytes)
    }

    private init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 digest is 32 bytes")
        func word(_ index: Int) -> UInt64 { bytes[index..<index + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        (a, b, c, d) = (word(0), word(8), word(16), word(24))
    }

    /// The lower-case hex form, as the key store indexes keys.
    var hex: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for value in [a, b, c, d] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return Hex.encode(bytes)
    }
}
