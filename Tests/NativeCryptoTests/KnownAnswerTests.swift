import NativeCrypto
import Testing

/// Known-answer tests: RFC 2202 (HMAC-SHA1), FIPS 180-1/180-2 (SHA-1, SHA-256), RFC 1321 (MD5),
/// and the CRC-32 check value.
@Suite("Known answers")
struct KnownAnswerTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format2: $0) }.joined() }
    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    struct HMACCase: Sendable, CustomTestStringConvertible {
        let number: Int
        let key: [UInt8]
        let data: [UInt8]
        let digest: String
        var testDescription: String { "RFC 2202 case \(number)" }
    }

    static let rfc2202: [HMACCase] = [
        HMACCase(number: 1, key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            digest: "b617318655057264e28bc0b6fb378c8ef146be00"),
        HMACCase(number: 2, key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            digest: "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        HMACCase(number: 3, key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
            digest: "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        HMACCase(number: 4, key: bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"),
            data: [UInt8](repeating: 0xcd, count: 50), digest: "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        HMACCase(number: 5, key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8),
            digest: "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        HMACCase(number: 6, key: [UInt8](repeating: 0xaa, count: 80),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            digest: "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        HMACCase(number: 7, key: [UInt8](repeating: 0xaa, count: 80),
            data: Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
            digest: "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
    ]

    @Test("HMAC-SHA1 matches RFC 2202", arguments: rfc2202)
    func hmacSHA1(_ vector: HMACCase) {
        let mac = HMACSHA1(key: vector.key)
        #expect(Self.hex(mac.authenticationCode(for: vector.data)) == vector.digest)
        // The prepared context is reusable: a second call gives the same answer.
        #expect(Self.hex(mac.authenticationCode(for: vector.data)) == vector.digest)
        #expect(Self.hex(HMACSHA1.authenticationCode(for: vector.data, key: vector.key)) == vector.digest)
        let half = vector.data.count / 2
        #expect(Self.hex(mac.authenticationCode(forParts: [Array(vector.data[..<half]), [], Array(vector.data[half...])]))
            == vector.digest)
    }

    @Test func sha1OfABC() {
        #expect(Self.hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Self.hex(SHA1.hash([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func sha256OfABC() {
        #expect(
            Self.hex(SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func md5OfEmpty() {
        #expect(Self.hex(MD5.hash([UInt8]())) == "d41d8cd98f00b204e9800998ecf8427e")
    }

    @Test func crc32CheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("hello".utf8)) == 907_060_870)
    }

    @Test func incrementalEqualsOneShot() {
        let data = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var digest = Digest(.sha1)
        var crc = CRC32()
        for piece in [0..<1, 1..<4096, 4096..<4096, 4096..<77_777, 77_777..<100_000] {
            digest.update(data[piece])
            crc.update(data[piece])
        }
        #expect(digest.finalize() == SHA1.hash(data))
        #expect(crc.value == CRC32.checksum(data))
        var resumed = CRC32(resuming: CRC32.checksum(data[..<77_777]))
        resumed.update(data[77_777...])
        #expect(resumed.value == CRC32.checksum(data))
        for split in [0, 1, 77_777, 100_000] {
            let combined = CRC32.combine(
                CRC32.checksum(data[..<split]), CRC32.checksum(data[split...]), length: Int64(100_000 - split))
            #expect(combined == CRC32.checksum(data))
        }
        var sha256 = Digest(.sha256)
        sha256.update(data[..<10])
        sha256.update(data[10...])
        #expect(sha256.finalize() == SHA256.hash(data))
    }
}

extension String {
    fileprivate init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

@Suite("Hex")
struct HexTests {
    @Test func encodesLowerCaseAndDecodesEitherCase() {
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.decode("000FA0ff") == [0x00, 0x0f, 0xa0, 0xff])
        #expect(Hex.decode("") == [])
    }

    @Test func encodesEveryByteFromContiguousAndOtherCollections() {
        let all = (0...255).map { UInt8($0) }
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(Hex.encode(all) == expected)
        #expect(Hex.encode(all.reversed()) == all.reversed().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
        #expect(Hex.encode([UInt8]()) == "")
    }

    @Test(arguments: ["abc", "zz", "0g", " 0"])
    func refusesMalformedText(text: String) {
        #expect(Hex.decode(text) == nil)
    }
}
