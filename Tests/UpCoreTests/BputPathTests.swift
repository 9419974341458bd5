import Testing
import UpCore

@Suite("BputPath")
struct BputPathTests {
    @Test func parsesContextAndOffset() throws {
        let bput = try BputPath.parse("/bput/AQIDBA-_AA==/1048576")
        #expect(bput == BputPath(context: "AQIDBA-_AA==", offset: 1_048_576))
        #expect(bput.path == "/bput/AQIDBA-_AA==/1048576")
        #expect(try BputPath.parse("/bput/abc/0").offset == 0)
    }

    @Test(
        "Bad shapes are 400",
        arguments: ["/bput/abc", "/bput//0", "/bput/a,b/0", "/bput/a%2Fb/0", "/bput/a.b/0", "/bput/abc/-1",
            "/bput/abc/4194305", "/bput/abc/0/1"])
    func rejects(path: String) {
        #expect(throws: UpError(.badRequest)) { try BputPath.parse(path) }
    }
}
