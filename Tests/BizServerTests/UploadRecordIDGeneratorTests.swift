import BizServer
import Testing

@Suite struct UploadRecordIDGeneratorTests {
    @Test func hasTheDocumentedShape() {
        var generator = UploadRecordIDGenerator()
        let id = generator.next(milliseconds: 1_700_000_000_000)
        #expect(id.count == 29)
        #expect(id.hasPrefix("up_"))
        #expect(id.dropFirst(3).allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) })
        #expect(UploadRecordIDGenerator.isWellFormed(id))
        #expect(UploadRecordIDGenerator.milliseconds(of: id) == 1_700_000_000_000)
        #expect(!UploadRecordIDGenerator.isWellFormed("up_" + String(repeating: "I", count: 26)))
        #expect(!UploadRecordIDGenerator.isWellFormed("up_" + String(repeating: "8", count: 26)))
        #expect(!UploadRecordIDGenerator.isWellFormed("xx_" + String(repeating: "0", count: 26)))
    }

    @Test func encodesKnownBits() {
        // All-ones random bits (top bit cleared by the generator) at time 0.
        var generator = UploadRecordIDGenerator(random: { .max })
        #expect(generator.next(milliseconds: 0) == "up_0000000000" + "FZZZZZZZZZZZZZZZ")
        var zeros = UploadRecordIDGenerator(random: { 0 })
        #expect(zeros.next(milliseconds: (1 << 48) - 1) == "up_7ZZZZZZZZZ" + "0000000000000000")
        // A second id in the same millisecond adds (random & 0xFFFFFFFF) + 1 = 1.
        #expect(zeros.next(milliseconds: (1 << 48) - 1) == "up_7ZZZZZZZZZ" + "0000000000000001")
    }

    @Test func strictlyIncreasesEvenWhenTheClockStallsOrGoesBack() {
        var generator = UploadRecordIDGenerator()
        let times: [Int64] = [1000, 1000, 1000, 999, 5, 1001, 1001, 2000]
        let ids = times.map { generator.next(milliseconds: $0) }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        #expect(UploadRecordIDGenerator.milliseconds(of: ids[4]) == 1000)
    }
}
