import HTTPKit
import Testing

@Suite struct RequestTests {
    @Test func splitsRawTargetWithoutDecoding() {
        let request = Request(method: .get, target: "/a%2Fb/c?x=%2F&y&z=a+b")
        #expect(request.path == "/a%2Fb/c")
        #expect(request.query == "x=%2F&y&z=a+b")
        #expect(request.queryItems.map(\.name) == ["x", "y", "z"])
        #expect(request.queryItem("x") == "/")
        #expect(request.queryItem("y") == "")
        #expect(request.queryItem("z") == "a b")
    }

    @Test func delimitersAreFoundByByteNotByCharacter() {
        // U+0600 is a prepend character: "\u{600}?" is ONE Character, yet HTTP's "?" is there.
        let request = Request(method: .get, target: "/p\u{600}?k=v&\u{301}=x#f")
        #expect(request.path == "/p\u{600}")
        #expect(request.queryItem("k") == "v")
        #expect(request.queryItems.map(\.name) == ["k", "\u{301}"])
        // "=\u{301}" is one Character too: the value starts with the mark.
        #expect(Request(method: .get, target: "/p?a=\u{301}b").queryItem("a") == "\u{301}b")
    }

    @Test func malformedEscapesAreKept() {
        #expect(Request(method: .get, target: "/?q=%zz%4").queryItem("q") == "%zz%4")
    }

    @Test func headersLookUpCaseInsensitivelyAndKeepOrderAndCase() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-One": "1", "x-one": "2"]
        #expect(headers["content-type"] == "a")
        #expect(headers.values(for: "X-ONE") == ["1", "2"])
        headers.set(name: "X-One", value: "3")
        #expect(headers.fields.map(\.name) == ["Content-Type", "X-One"])
        #expect(headers["x-one"] == "3")
        headers.remove(name: "CONTENT-TYPE")
        #expect(headers.count == 1)
    }

    @Test func requestIDsAreEchoedOnlyWhenSane() {
        #expect(RequestID.isAcceptable("abc-DEF_1.2"))
        #expect(!RequestID.isAcceptable(""))
        #expect(!RequestID.isAcceptable("a b"))
        #expect(!RequestID.isAcceptable(String(repeating: "a", count: 65)))
        let generated = RequestID.generate()
        #expect(generated.count == 16 && RequestID.isAcceptable(generated))
    }

    @Test func jsonHelpersRenderErrorShape() throws {
        struct Payload: Encodable { let url: String }
        #expect(String(decoding: try Response.json(Payload(url: "a/b")).bodyBytes, as: UTF8.self) == #"{"url":"a/b"}"#)
        let error = Response.error(status: 400, message: "bad \"quote\"")
        #expect(String(decoding: error.bodyBytes, as: UTF8.self) == #"{"error":"bad \"quote\""}"#)
    }
}
