import Testing
import UpCore

@Suite("RsMkfilePath")
struct RsMkfilePathTests {
    @Test func parsesEveryOptionalPair() throws {
        let path = "/rs-mkfile/bXlidWNrZXQ6ZGlyL2EudHh0/fsize/10/mimeType/dGV4dC9wbGFpbg==/meta/bQ==/customer/c%201/params/eD0x/rotate/90"
        let parsed = try RsMkfilePath.parse(path)
        #expect(parsed == RsMkfilePath(
            bucket: "mybucket", key: "dir/a.txt", fsize: 10, mimeType: "text/plain", meta: "m", customer: "c 1",
            params: "x=1", rotate: 90))
        #expect(try RsMkfilePath.parse(parsed.path) == parsed)
    }

    @Test func pairsInAnyOrderAndRawParams() throws {
        let parsed = try RsMkfilePath.parse("/rs-mkfile/bXlidWNrZXQ=/rotate/0/params/a%3D1%26b/fsize/0/other/x")
        #expect(parsed == RsMkfilePath(bucket: "mybucket", key: nil, fsize: 0, params: "a=1&b", rotate: 0))
    }

    @Test(
        "Malformed is 400",
        arguments: ["/rs-mkfile/!!/fsize/1", "/rs-mkfile/bXlidWNrZXQ=", "/rs-mkfile/bXlidWNrZXQ=/fsize/1/fsize/1",
            "/rs-mkfile/bXlidWNrZXQ=/fsize", "/rs-mkfile/bXlidWNrZXQ=/fsize/1/mimeType/!"])
    func rejects(path: String) {
        #expect(throws: UpError(.badRequest)) { try RsMkfilePath.parse(path) }
    }
}
