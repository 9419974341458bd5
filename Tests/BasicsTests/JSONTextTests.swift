import Basics
import Foundation
import Testing

@Suite("JSONText")
struct JSONTextTests {
    static let samples = [
        "", "plain ascii", "quote \" backslash \\ slash /", "tab\tnewline\nreturn\r", "\u{01}\u{08}\u{0C}\u{1F}\u{7F}",
        "naïve 日本語 🎉", "\"🎉\"\n", "$(etag)",
    ]

    @Test func byteAndStringFormsAgreeAndRoundTrip() throws {
        for sample in Self.samples {
            var bytes: [UInt8] = []
            JSONText.appendString(sample, to: &bytes)
            let text = JSONText.quoted(sample)
            #expect(String(decoding: bytes, as: UTF8.self) == text)
            let decoded = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
            #expect(decoded == sample)
        }
    }

    @Test func escapesOnlyWhatJSONRequires() {
        #expect(JSONText.quoted("a\"b\\c\nd\u{01}é/") == #""a\"b\\c\nd\u0001é/""#)
        var content: [UInt8] = Array("x".utf8)
        JSONText.appendStringContent("\t日", to: &content)
        #expect(String(decoding: content, as: UTF8.self) == #"x\t日"#)
    }
}
