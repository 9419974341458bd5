import Testing
import UpCore

@Suite("ConstantTime")
struct ConstantTimeTests {
    @Test func comparesBytes() {
        #expect(ConstantTime.equals("abc".utf8, "abc".utf8))
        #expect(!ConstantTime.equals("abc".utf8, "abd".utf8))
        #expect(!ConstantTime.equals("abc".utf8, "abcd".utf8))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
    }
}
