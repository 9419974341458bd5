import Testing
import UpServer

@Suite struct BlobIDTests {
    @Test func randomIDsAreLowerCaseHexAndDistinct() {
        let a = BlobID.random()
        let b = BlobID.random()
        #expect(a != b)
        #expect(a.hex.count == 32)
        #expect(BlobID(hex: a.hex) == a)
        #expect(a.shard == String(a.hex.prefix(2)))
    }

    @Test(arguments: ["", "../../etc/passwd", String(repeating: "A", count: 32), String(repeating: "a", count: 31)])
    func refusesAnythingButThirtyTwoLowerCaseHexCharacters(text: String) {
        #expect(BlobID(hex: text) == nil)
    }
}
