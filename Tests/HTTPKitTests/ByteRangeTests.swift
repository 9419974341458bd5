import HTTPKit
import Testing

/// `ByteRange.parse` on RFC 9110 §14.2 single ranges for a 100-byte body.
@Suite("ByteRange")
struct ByteRangeTests {
    @Test func readsTheThreeForms() {
        #expect(ByteRange.parse("bytes=0-9", size: 100) == .partial(0..<10))
        #expect(ByteRange.parse("bytes=90-", size: 100) == .partial(90..<100))
        #expect(ByteRange.parse("bytes=95-1000", size: 100) == .partial(95..<100))
        #expect(ByteRange.parse("bytes=-5", size: 100) == .partial(95..<100))
        #expect(ByteRange.parse("bytes=-500", size: 100) == .partial(0..<100))
        #expect(ByteRange.contentRange(95..<100, size: 100) == "bytes 95-99/100")
    }

    @Test func unsatisfiableAndIgnored() {
        #expect(ByteRange.parse("bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-", size: 0) == .unsatisfiable)
        for ignored in [nil, "items=0-1", "bytes=0-1,5-6", "bytes=5-1", "bytes=a-b", "bytes=-", "bytes=1"] {
            #expect(ByteRange.parse(ignored, size: 100) == .whole, "\(ignored ?? "nil")")
        }
    }
}
