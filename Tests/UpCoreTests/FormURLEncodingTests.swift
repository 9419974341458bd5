import Testing
import UpCore

@Suite("FormURLEncoding")
struct FormURLEncodingTests {
    @Test func percentEncodesEverythingButUnreserved() {
        #expect(FormURLEncoding.percentEncode("a-b.c_d~e") == "a-b.c_d~e")
        #expect(FormURLEncoding.percentEncode("a b&c=d/e+f") == "a%20b%26c%3Dd%2Fe%2Bf")
        #expect(FormURLEncoding.percentEncode("七牛") == "%E4%B8%83%E7%89%9B")
    }

    @Test func parsesOrderedPairs() throws {
        let pairs = try #require(FormURLEncoding.parse(Array("b=2&a=x+y&a=%E4%B8%83&flag&&empty=".utf8)))
        #expect(pairs.map(\.name) == ["b", "a", "a", "flag", "empty"])
        #expect(pairs.map(\.value) == ["2", "x y", "七", "", ""])
    }

    @Test(arguments: ["a=%", "a=%4", "a=%zz", "a=%FF", "%C3=1"])
    func rejectsInvalidEncoding(_ body: String) {
        #expect(FormURLEncoding.parse(Array(body.utf8)) == nil)
    }

    @Test func percentDecodeKeepsPlusInPaths() {
        #expect(FormURLEncoding.percentDecode("a+b%20c", plusAsSpace: false) == "a+b c")
        #expect(FormURLEncoding.percentDecode("a+b%20c") == "a b c")
    }
}
