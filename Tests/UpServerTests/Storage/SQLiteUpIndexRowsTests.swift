import Foundation
import Testing
import TestSupport

@testable import UpServer

/// Object metadata is stored text, read by later versions; `JSONEncoder` with sorted keys wrote
/// every row before, so it is the oracle for the text, and its rows must still read.
@Suite("SQLiteUpIndex.Rows")
struct SQLiteUpIndexRowsTests {
    static let samples: [[String: String]] = [
        [:],
        ["x-qn-meta-a": "1"],
        [
            "x-qn-meta-Zeta": "z", "x-qn-meta-alpha": "quote \" slash / tab\t é 漢 😀", "x-qn-meta-10": "ten",
            "x-qn-meta-9": "nine", "x-qn-meta-_": "", "x-qn-meta-A": "\u{1}",
        ],
    ]

    @Test(arguments: samples.indices)
    func metadataIsTheTextJSONEncoderWroteAndReadsBack(index: Int) throws {
        let metadata = Self.samples[index]
        let text = SQLiteUpIndex.Rows.metadataText(metadata)
        #expect(text == (try LegacyJSON.text(metadata)))
        #expect(try SQLiteUpIndex.Rows.metadata(text) == metadata)
    }

    @Test func metadataWrittenWithOtherSpacingAndEscapesReads() throws {
        #expect(try SQLiteUpIndex.Rows.metadata(#" { "b" : "\/x\u00e9" , "a":"" } "#) == ["a": "", "b": "/xé"])
    }

    @Test(arguments: ["", "[]", "null", #"{"a":1}"#, #"{"a":null}"#, #"{"a":"b""#])
    func metadataThatIsNotAnObjectOfStringsIsRefused(text: String) {
        #expect(throws: (any Error).self) { try SQLiteUpIndex.Rows.metadata(text) }
    }
}
