import Testing
import UpCore

@Suite("Etag")
struct EtagTests {
    static let mib = 1024 * 1024

    @Test(arguments: [1, 7, 65_536, 1_048_573, 4 * 1024 * 1024, 4 * 1024 * 1024 + 1, 5_000_000])
    func anyPieceSizeGivesTheSameEtag(pieceSize: Int) {
        let data = SpecVectors.pattern9MiB
        var hasher = EtagHasher()
        var offset = 0
        while offset < data.count {
            let end = min(offset + pieceSize, data.count)
            hasher.update(data[offset..<end])
            offset = end
        }
        let result = hasher.finalize()
        #expect(result.etag == "litJxRiN_qpEphigieYPgiWEx2e9")
        #expect(result.byteCount == Int64(data.count))
        #expect(result.blockDigests.count == 3)
    }

    @Test func blockBoundaries() {
        #expect(Etag.of([UInt8]()) == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
        let exact = [UInt8](repeating: 1, count: 4 * Self.mib)
        var hasher = EtagHasher()
        hasher.update(exact)
        hasher.update([UInt8]())
        let result = hasher.finalize()
        #expect(result.blockDigests.count == 1)
        #expect(result.etag.hasPrefix("F"))
        #expect(Etag.of(exact + [1]).hasPrefix("l"))
        #expect(Etag.fromBlockDigests([]) == Etag.of([UInt8]()))
    }

    @Test func v2SinglePartEqualsV1() {
        var hasher = EtagHasher()
        hasher.update(Array("hello".utf8))
        let result = hasher.finalize()
        #expect(Etag.v2(parts: [Etag.Part(digest: result.partDigest, size: 5)]) == "Fqr0xh3cxeii2r7eDztILNmuqUNN")
    }

    @Test func v2NonStandardLayoutStartsWithN() {
        let parts = [Etag.Part(digest: [UInt8](repeating: 0, count: 20), size: 1), Etag.Part(digest: [UInt8](repeating: 1, count: 20), size: 1)]
        let etag = Etag.v2(parts: parts)
        #expect(etag.hasPrefix("n"))
        #expect(etag.count == 28)
    }
}
