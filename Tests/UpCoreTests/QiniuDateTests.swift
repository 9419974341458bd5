import Testing
import UpCore

@Suite("QiniuDate")
struct QiniuDateTests {
    static let cases: [(String, Int64)] = [
        ("19700101T000000Z", 0), ("20300101T000000Z", 1_893_456_000), ("20000229T235959Z", 951_868_799),
        ("21060207T062816Z", 4_294_967_296), ("19691231T235959Z", -1),
    ]

    @Test(arguments: cases)
    func parsesAndFormats(text: String, seconds: Int64) {
        #expect(QiniuDate.parse(text) == seconds)
        #expect(QiniuDate.format(seconds) == text)
    }

    @Test(arguments: [
        "", "20300101T000000", "20300101 000000Z", "20301301T000000Z", "20300230T000000Z", "20190229T000000Z",
        "20300101T240000Z", "20300101T006000Z", "2030010AT000000Z", "20300101T000000Z ",
    ])
    func rejectsMalformed(_ text: String) {
        #expect(QiniuDate.parse(text) == nil)
    }
}
