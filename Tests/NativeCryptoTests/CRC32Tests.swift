import NativeCrypto
import Testing

/// CRC-32 against its definition: the reflected polynomial 0xEDB88320 applied bit by bit, with
/// the pre- and post-inversion zlib and Qiniu's `crc32` field use. The library behind `CRC32`
/// (ISA-L's folding code on Linux) switches paths by length and alignment; every length from 0
/// to 300 at every start offset 0...15, and larger pieces fed in uneven steps, cover those paths.
@Suite("CRC-32")
struct CRC32Tests {
    /// The definition, one bit at a time: slow, and shares no code with any library.
    static func reference(_ bytes: some Sequence<UInt8>, resuming start: UInt32 = 0) -> UInt32 {
        var crc = ~start
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static let data: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<(1 << 20) + 77).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }()

    @Test func everyShortLengthAtEveryAlignment() {
        for offset in 0..<16 {
            for length in 0...300 {
                let piece = Self.data[offset..<offset + length]
                #expect(CRC32.checksum(piece) == Self.reference(piece), "offset \(offset), length \(length)")
            }
        }
    }

    @Test func aMebibyteFedInUnevenPiecesAndResumed() {
        let expected = Self.reference(Self.data)
        #expect(CRC32.checksum(Self.data) == expected)
        var crc = CRC32()
        var start = 0
        var step = 1
        while start < Self.data.count {
            let end = min(Self.data.count, start + step)
            crc.update(Self.data[start..<end])
            start = end
            step = step * 3 + 1
        }
        #expect(crc.value == expected)
        let split = 524_291
        var resumed = CRC32(resuming: Self.reference(Self.data[..<split]))
        resumed.update(Self.data[split...])
        #expect(resumed.value == expected)
    }
}
