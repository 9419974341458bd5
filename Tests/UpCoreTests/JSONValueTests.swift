import Testing
import UpCore

@Suite("JSONValue")
struct JSONValueTests {
    @Test func keepsOrderAndIntDoubleSplit() throws {
        let value = try JSONValue.parse(#"{"z":1,"a":1.5,"m":[true,false,null],"big":1e3,"neg":-0,"s":"x"}"#)
        #expect(value.serialized() == #"{"z":1,"a":1.5,"m":[true,false,null],"big":1000.0,"neg":0,"s":"x"}"#)
        #expect(value["z"] == .int(1))
        #expect(value["a"] == .double(1.5))
        #expect(value["missing"] == nil)
    }

    /// Integers are written digit by digit: every digit count, both signs and both extremes.
    @Test func integersAreWrittenAsSwiftPrintsThem() {
        var values: [Int64] = [0, -1, Int64.max, Int64.min, Int64.min + 1, 1_900_003_600]
        var power: Int64 = 1
        for _ in 0..<18 {
            values += [power - 1, power, power + 1, -power, 7 * power + 3]
            power *= 10
        }
        for value in values {
            #expect(JSONValue.int(value).serialized() == String(value))
        }
    }

    @Test func stringsRoundTrip() throws {
        let text = #""a/b \"q\" \\ \n \t \u0001 \u4e03 \ud83d\ude00""#
        let value = try JSONValue.parse(text)
        #expect(value == .string("a/b \"q\" \\ \n \t \u{01} 七 😀"))
        #expect(value.serialized() == #""a/b \"q\" \\ \n \t \u0001 七 😀""#)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "tru", "nul", "\"\\x\"", "\"\\ud800\"", "\"a\nb\"",
        "{\"a\" 1}", "[1] 2", "NaN", "'a'", "{a:1}", "1e", "\"\\u12\"",
    ])
    func rejectsInvalid(_ text: String) {
        #expect(throws: UpError(.invalidJSON)) { try JSONValue.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: UpError(.invalidJSON)) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func bigIntegersBecomeDoubles() throws {
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONValue.parse("-9223372036854775809") == .double(-0x1p63))  // -2^63: the nearest Double
        #expect(try JSONValue.parse("99999999999999999999") == .double(1e20))
    }

    /// Integers are read digit by digit: every digit count and both signs give Swift's value.
    @Test func integersAreReadAsSwiftReadsThem() throws {
        var power: Int64 = 1
        for _ in 0..<18 {
            for value in [power - 1, power, 7 * power + 3, -power, -(power - 1)] {
                #expect(try JSONValue.parse(String(value)) == .int(value))
            }
            power *= 10
        }
        #expect(try JSONValue.parse("-0") == .int(0))
    }

    /// A string without escapes is taken straight from the input: invalid UTF-8 is still
    /// refused, at the same offset, and an escape after plain text still works.
    @Test func plainStringsAreValidatedToo() throws {
        #expect(try JSONValue.parse(Array(#"["abc","été"]"#.utf8)) == .array([.string("abc"), .string("été")]))
        #expect(try JSONValue.parse(#""plain then \n escaped""#) == .string("plain then \n escaped"))
        // The second one has an escape after the bad byte: the buffered path.
        for text: [UInt8] in [[0x22, 0x61, 0xC3, 0x28, 0x22], [0x22, 0xFF, 0x5C, 0x6E, 0x22]] {
            let error = #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parseDocument(text) }
            #expect(error?.description == "invalid UTF-8 at byte 5")
        }
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        #expect(throws: UpError(.invalidJSON)) { try JSONValue.parse(deep) }
    }

    @Test func lastDuplicateWins() throws {
        let value = try JSONValue.parse(#"{"a":1,"a":2}"#)
        #expect(value["a"] == .int(2))
        #expect(value.serialized() == #"{"a":1,"a":2}"#)
    }
}
