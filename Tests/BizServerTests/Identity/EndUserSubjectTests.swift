@testable import BizServer
import Testing

/// Which subs can be a key segment: the only thing between a user and another user's prefix.
@Suite("End-user subject")
struct EndUserSubjectTests {
    @Test(arguments: [
        ("user-42", true), ("auth0|5f7c8ec7c33c6c004bbafe82", true), ("9f1c2e4a-0b6d-4c1e-8e2f-3a5b7c9d1e0f", true),
        ("110169484474386276334", true), ("用户七牛", true), ("a.b", true), ("a b", true), ("x@example.com", true),
        (String(repeating: "u", count: 128), true), (String(repeating: "é", count: 64), true),
        ("", false), (".", false), ("..", false), ("a..b", false), ("a/b", false), ("/", false), ("a\\b", false),
        ("a\u{0}b", false), ("a\u{1}b", false), ("a\nb", false), ("a\u{7F}b", false), ("a\u{85}b", false),
        ("$(fname)", false), ("a$b", false), (String(repeating: "u", count: 129), false),
        (String(repeating: "é", count: 65), false),
    ])
    func isAKeySegment(sub: String, allowed: Bool) {
        #expect(EndUserSubject.isKeySegment(sub) == allowed, "\(sub.debugDescription)")
    }

    @Test func fillsThePrefixOnceAndLiterally() {
        #expect(EndUserSubject.keyPrefix("users/{sub}/", sub: "u1") == "users/u1/")
        #expect(EndUserSubject.keyPrefix("users/{sub}/", sub: "{sub}") == "users/{sub}/")
        #expect(EndUserSubject.keyPrefix("t/{sub}/in/", sub: "{client}") == "t/{client}/in/")
    }
}
