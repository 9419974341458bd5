import Foundation
import JSONText
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

    /// Foundation's encoder is the oracle: the same text for every sample, short escapes included.
    @Test func writesWhatJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        for sample in Self.samples {
            let expected = String(decoding: try encoder.encode(sample), as: UTF8.self)
            #expect(JSONText.quoted(sample) == expected)
            var content = ""
            JSONText.appendStringContent(sample, to: &content)
            #expect("\"" + content + "\"" == expected)
        }
    }

    @Test(arguments: [0, 1, -1, 9, 10, -10, 99, 100, 1_000_000_007, Int64.max, Int64.min, Int64.min + 1])
    func writesIntegersAsSwiftDoes(value: Int64) {
        var bytes: [UInt8] = Array("x".utf8)
        JSONText.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x\(value)")
    }

    @Test func escapesOnlyWhatJSONRequires() {
        #expect(JSONText.quoted("a\"b\\c\nd\u{01}é/") == #""a\"b\\c\nd\u0001é/""#)
        var content: [UInt8] = Array("x".utf8)
        JSONText.appendStringContent("\t日", to: &content)
        #expect(String(decoding: content, as: UTF8.self) == #"x\t日"#)
    }
}
