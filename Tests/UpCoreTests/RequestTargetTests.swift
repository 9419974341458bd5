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
}
