import Foundation
import NativeCrypto
import Testing

/// The pointer loop against Foundation's base64 (with `+/` read as `-_`): every length from 0 to
/// 100, so each of the three tails (none, one, two bytes) is met many times over, and bytes
/// that reach all 64 characters.
@Suite("Base64Encoder")
struct Base64EncoderTests {
    static func reference(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    @Test func matchesFoundationForEveryLengthUpTo100() {
        for length in 0...100 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ length &* 13 &+ 251) }
            let expected = Self.reference(bytes)
            // Between other bytes on both sides: only the slot may change, only the range is read.
            let input = [0xFF, 0xFE] + bytes + [0xFD]
            var output = Array("<".utf8) + [UInt8](repeating: 0, count: expected.utf8.count) + Array(">".utf8)
            Base64Encoder.writeURLSafe(input, range: 2..<(2 + length), into: &output, at: 1)
            #expect(String(decoding: output, as: UTF8.self) == "<" + expected + ">", "length \(length)")
        }
    }

    @Test func usesEveryCharacterOfTheURLSafeAlphabet() {
        // 0x00 0x10 0x83 … : the 6-bit groups 0, 1, 2, … 63 in order.
        var bits: [UInt8] = []
        var accumulator = 0, count = 0
        for value in 0..<64 {
            accumulator = accumulator << 6 | value
            count += 6
            while count >= 8 {
                count -= 8
                bits.append(UInt8(truncatingIfNeeded: accumulator >> count))
            }
        }
        var output = [UInt8](repeating: 0, count: 64)
        Base64Encoder.writeURLSafe(bits, range: 0..<bits.count, into: &output, at: 0)
        #expect(output == Base64Encoder.urlSafeAlphabet)
        #expect(String(decoding: output, as: UTF8.self) == Self.reference(bits))
    }
}
