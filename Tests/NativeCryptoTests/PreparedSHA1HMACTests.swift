@testable import NativeCrypto
import Testing

/// HMAC-SHA1 on prepared SHA-1 states against two independent answers: RFC 2104's formula over
/// plain SHA-1, and (on Linux) OpenSSL's own HMAC through `EVP_MAC`. Keys shorter than, equal
/// to and longer than the 64-byte block (the longer ones are hashed first), and messages around
/// the block and padding boundaries, the empty one included.
@Suite("HMAC-SHA1 prepared states")
struct PreparedSHA1HMACTests {
    static let keyLengths = [0, 1, 14, 20, 63, 64, 65, 80, 131]
    static let messageLengths = [0, 1, 20, 55, 56, 63, 64, 65, 119, 120, 128, 500]

    static func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ 1) }
    }

    /// H((K' ^ opad) ‖ H((K' ^ ipad) ‖ m)), K' the key (hashed when longer than a block) padded with zeros.
    static func rfc2104(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA1.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA1.hash(block.map { $0 ^ 0x36 } + message)
        return SHA1.hash(block.map { $0 ^ 0x5C } + inner)
    }

    @Test(arguments: keyLengths)
    func matchesTheRFCFormulaAndOpenSSL(keyLength: Int) {
        let key = Self.bytes(keyLength, seed: keyLength)
        let mac = HMACSHA1(key: key)
        for length in Self.messageLengths {
            let message = Self.bytes(length, seed: length + 3)
            let code = mac.authenticationCode(for: message)
            #expect(code == Self.rfc2104(key: key, message: message), "key \(keyLength), message \(length)")
            #if !canImport(CryptoKit)
            let openSSL = unsafe message.withUnsafeBytes { unsafe OpenSSLMAC(.sha1, key: key).code(for: $0) }
            #expect(code == openSSL, "key \(keyLength), message \(length)")
            #endif
            let split = length / 3
            #expect(mac.authenticationCode(forParts: [Array(message[..<split]), [], Array(message[split...])]) == code)
        }
    }
}
