@testable import BizServer
import Testing

/// The credential cut out of an `Authorization` header, byte-wise for ASCII headers.
@Suite("ClientDirectory.bearer")
struct BearerTests {
    @Test(arguments: [
        ("Bearer abc", "abc"), ("bEaReR abc", "abc"), ("  Bearer   abc  ", "abc"), ("Bearer a b ", "a b"),
        ("Bearer  ", ""), ("Bearer x", "x"), ("Bearer", nil), ("Bearer ", nil), ("Bearerx abc", nil), ("Basic abc", nil),
        ("Bearer\tabc", nil), ("", nil), (" ", nil), ("Bearer upk_0123456789", "upk_0123456789"),
    ] as [(String, String?)])
    func cutsTheCredential(header: String, credential: String?) {
        #expect(ClientDirectory.bearer(header) == credential)
    }

    @Test func noHeaderIsNoCredential() {
        #expect(ClientDirectory.bearer(nil) == nil)
    }
}
