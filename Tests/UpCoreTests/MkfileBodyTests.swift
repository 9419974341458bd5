import Testing
import UpCore

@Suite("MkfileBody")
struct MkfileBodyTests {
    @Test func parsesCommaJoinedList() throws {
        #expect(try MkfileBody.parse(Array("a-_=,B9".utf8)).contexts == ["a-_=", "B9"])
        #expect(try MkfileBody.parse(Array("one".utf8)).contexts == ["one"])
        #expect(try MkfileBody.parse(Array("a,b\r\n".utf8)).contexts == ["a", "b"])
        #expect(MkfileBody(contexts: ["a", "b"]).text == "a,b")
    }

    @Test func emptyBodyIsNoBlocks() throws {
        #expect(try MkfileBody.parse([UInt8]()).contexts.isEmpty)
        #expect(try MkfileBody.parse(Array("\n".utf8)).contexts.isEmpty)
    }

    @Test("Empty elements and foreign characters are 400", arguments: ["a,", ",a", "a,,b", "a, b", "a/b", "a?b", "ä"])
    func rejects(body: String) {
        #expect(throws: UpError(.badRequest)) { try MkfileBody.parse(Array(body.utf8)) }
    }
}
