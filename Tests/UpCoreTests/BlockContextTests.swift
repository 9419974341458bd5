import NativeCrypto
import Testing
import UpCore

@Suite("BlockContext")
struct BlockContextTests {
    static let mac = HMACSHA1(key: Array("ctx-secret".utf8))
    static let sample = BlockContext(
        blockID: Array(0..<16), blockSize: 4_194_304, offset: 1_048_576, crc32: 3_421_780_262,
        expiresAt: 1_900_000_000)

    static func bytes(of text: String) throws -> [UInt8] { try #require(URLSafeBase64.decode(text)) }

    @Test func roundTrips() throws {
        let text = Self.sample.encode(mac: Self.mac)
        #expect(try BlockContext.decode(text, mac: Self.mac, now: 1_800_000_000) == Self.sample)
        let complete = BlockContext(blockID: [7], blockSize: 1, offset: 1, crc32: 0, expiresAt: -1)
        #expect(try BlockContext.decode(complete.encode(mac: Self.mac), mac: Self.mac, now: -5) == complete)
        #expect(complete.isComplete && !Self.sample.isComplete)
        // Unpadded text is accepted too (§ Notation: decoders accept both).
        let unpadded = String(text.filter { $0 != "=" })
        #expect(try BlockContext.decode(unpadded, mac: Self.mac, now: 0) == Self.sample)
    }

    @Test func usesOnlyPathAndListSafeCharacters() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_=-")
        for idLength in [1, 2, 3, 16, 64] {
            let ctx = BlockContext(
                blockID: Array(repeating: 0xFF, count: idLength), blockSize: 4_194_304, offset: 4_194_304,
                crc32: .max, expiresAt: .max)
            let text = ctx.encode(mac: Self.mac)
            #expect(text.allSatisfy { allowed.contains($0) }, "\(text)")
        }
    }

    @Test func everyFlippedByteIsRejected() throws {
        let bytes = try Self.bytes(of: Self.sample.encode(mac: Self.mac))
        for index in bytes.indices {
            var forged = bytes
            forged[index] ^= 0x01
            #expect(throws: UpError(.invalidContext)) {
                try BlockContext.decode(URLSafeBase64.encode(forged), mac: Self.mac, now: 0)
            }
        }
    }

    @Test func otherSecretIsRejected() {
        let other = HMACSHA1(key: Array("other-secret".utf8))
        #expect(throws: UpError(.invalidContext)) {
            try BlockContext.decode(Self.sample.encode(mac: other), mac: Self.mac, now: 0)
        }
    }

    @Test func truncatedOrExtendedIsRejected() throws {
        let bytes = try Self.bytes(of: Self.sample.encode(mac: Self.mac))
        for count in [0, 1, 10, 23, bytes.count - 1] {
            #expect(throws: UpError(.invalidContext)) {
                try BlockContext.decode(URLSafeBase64.encode(bytes.prefix(count)), mac: Self.mac, now: 0)
            }
        }
        #expect(throws: UpError(.invalidContext)) {
            try BlockContext.decode(URLSafeBase64.encode(bytes + [0]), mac: Self.mac, now: 0)
        }
        for text in ["", "!!!!", "a,b", "abc/def"] {
            #expect(throws: UpError(.invalidContext)) { try BlockContext.decode(text, mac: Self.mac, now: 0) }
        }
    }

    @Test func validThroughItsAdvertisedExpiryAndNotAfter() throws {
        let text = Self.sample.encode(mac: Self.mac)
        #expect(try BlockContext.decode(text, mac: Self.mac, now: 1_900_000_000) == Self.sample)
        let error = #expect(throws: UpError(.invalidContext)) {
            try BlockContext.decode(text, mac: Self.mac, now: 1_900_000_001)
        }
        #expect(error?.detail.contains("expired") == true)
    }

    @Test func unknownVersionIsRejectedEvenWhenSigned() throws {
        var signed = try Self.bytes(of: Self.sample.encode(mac: Self.mac)).dropLast(HMACSHA1.byteCount).map { $0 }
        signed[0] = 2
        let resigned = signed + Self.mac.authenticationCode(forParts: [Array("upgate-ctx\0".utf8), signed])
        let error = #expect(throws: UpError(.invalidContext)) {
            try BlockContext.decode(URLSafeBase64.encode(resigned), mac: Self.mac, now: 0)
        }
        #expect(error?.detail.contains("version") == true)
    }

    @Test func signedButOutOfRangeFieldsAreRejected() throws {
        // offset > blockSize, correctly signed: still refused.
        var signed: [UInt8] = [1, 1, 9, 0, 0, 0, 10, 0, 0, 0, 11, 0, 0, 0, 0]
        signed += [0, 0, 0, 0, 0, 0, 0, 100]
        let text = URLSafeBase64.encode(
            signed + Self.mac.authenticationCode(forParts: [Array("upgate-ctx\0".utf8), signed]))
        let error = #expect(throws: UpError(.invalidContext)) { try BlockContext.decode(text, mac: Self.mac, now: 0) }
        #expect(error?.detail.contains("out of range") == true)
    }
}
