import Testing
import UpCore

@Suite("MkblkPath")
struct MkblkPathTests {
    @Test func parsesTheBlockSizeRange() throws {
        #expect(try MkblkPath.parse("/mkblk/4194304") == MkblkPath(blockSize: 4_194_304))
        #expect(try MkblkPath.parse("/mkblk/1").blockSize == 1)
        #expect(MkblkPath(blockSize: 17).path == "/mkblk/17")
    }

    @Test("Bad sizes and shapes are 400", arguments: ["/mkblk/0", "/mkblk/4194305", "/mkblk/", "/mkblk/x", "/mkblk/4/", "/mkblk/4/5", "/bput/4"])
    func rejects(path: String) {
        #expect(throws: UpError(.badRequest)) { try MkblkPath.parse(path) }
    }
}
