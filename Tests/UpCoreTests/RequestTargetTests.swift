import Testing
import UpCore

@Suite("RequestTarget")
struct RequestTargetTests {
    @Test func extractsPathAndQuery() {
        #expect(RequestTarget.of(url: "http://127.0.0.1:8080/callback?x=1") == "/callback?x=1")
        #expect(RequestTarget.of(url: "https://h/p/q#frag") == "/p/q")
        #expect(RequestTarget.of(url: "http://h") == "/")
        #expect(RequestTarget.of(url: "http://h?x=1") == "/?x=1")
    }

    /// Found with the byte-level reference of scripts/fuzz/libfuzzer (callback): the delimiters
    /// were found as Characters, and "/", "?" or "#" joined to a combining mark after it (or to
    /// U+0600 before it) is not one, so the signed target differed from what curl sends.
    @Test func delimitersAreFoundByBytes() {
        #expect(RequestTarget.of(url: "http://h/\u{0301}cb?x=1") == "/\u{0301}cb?x=1")
        #expect(RequestTarget.of(url: "http://h\u{0600}/cb") == "/cb")
        #expect(RequestTarget.of(url: "http://h/cb?x=1#\u{0301}f") == "/cb?x=1")
        #expect(RequestTarget.of(url: "http://h?\u{0301}x") == "/?\u{0301}x")
    }
}
