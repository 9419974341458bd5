import Basics
import Testing

@Suite("RandomID")
struct RandomIDTests {
    @Test func hasTheRequestedLengthAndOnlyURLSafeCharacters() {
        for count in [0, 1, 9, 10, 11, 16, 64] {
            let id = RandomID.urlSafe(count: count)
            #expect(id.utf8.count == count)
            #expect(id.utf8.allSatisfy { $0.isURLSafe })
        }
    }

    @Test func usesTheWholeAlphabetAndDoesNotRepeat() {
        let ids = (0..<2000).map { _ in RandomID.urlSafe(count: 16) }
        #expect(Set(ids).count == ids.count)
        // 32,000 characters: every one of the 64 appears (a stuck bit would leave half unused).
        #expect(Set(ids.joined().utf8).count == 64)
    }

    @Test func idsDrawnOnManyThreadsAtOnceDoNotRepeat() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { (0..<5000).map { _ in RandomID.urlSafe(count: 16) } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 40_000)
        #expect(Set(ids).count == ids.count)
        // The first ten characters come from one word each: those must not repeat either.
        #expect(Set(ids.map { $0.prefix(10) }).count == ids.count)
    }
}

extension UInt8 {
    fileprivate var isURLSafe: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
            || self == 0x5F || self == 0x2D
    }
}
