import Testing
import UpCore

@Suite("PutPath")
struct PutPathTests {
    @Test func parsesTheDocumentedShape() throws {
        let put = try PutPath.parse("/put/5/key/aGVsbG8udHh0/mimeType/dGV4dC9wbGFpbg==/crc32/907060870/x:var/QQ==")
        #expect(put == PutPath(fsize: 5, key: "hello.txt", mimeType: "text/plain", crc32: 907_060_870, customVariables: [("x:var", "A")]))
        #expect(try PutPath.parse(put.path) == put)
    }

    @Test func putb64IsMarked() throws {
        let put = try PutPath.parse("/putb64/5/key/aw")
        #expect(put.isBase64Body && put.key == "k" && put.fsize == 5)
        #expect(put.path.hasPrefix("/putb64/5/"))
    }

    @Test("Bad crc32 and duplicates are 400", arguments: ["/put/5/crc32/4294967296", "/put/5/crc32/-1", "/put/5/crc32/1/crc32/1", "/put/x", "/putx/5"])
    func rejects(path: String) {
        #expect(throws: UpError(.badRequest)) { try PutPath.parse(path) }
    }
}
