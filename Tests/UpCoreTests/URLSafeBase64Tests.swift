import Testing
import UpCore

@Suite("URLSafeBase64")
struct URLSafeBase64Tests {
    /// RFC 4648 §10 test vectors (same in the URL-safe alphabet: no `+`/`/` occur).
    static let rfc4648: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test(arguments: rfc4648)
    func encodesAndDecodesRFC4648(plain: String, encoded: String) {
        #expect(URLSafeBase64.encode(plain.utf8) == encoded)
        #expect(URLSafeBase64.decode(encoded) == Array(plain.utf8))
    }

    @Test(arguments: rfc4648)
    func appendsARangeAfterWhatIsThere(plain: String, encoded: String) {
        // The plain text sits between other bytes; only it is encoded, after the existing prefix.
        let input = Array("<<" .utf8) + Array(plain.utf8) + Array(">>".utf8)
        var output = Array("token:".utf8)
        URLSafeBase64.append(input, range: 2..<(2 + plain.utf8.count), to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "token:" + encoded)
        #expect(URLSafeBase64.encodedCount(plain.utf8.count) == encoded.utf8.count)
    }

    @Test(arguments: rfc4648)
    func writesIntoAReservedSlot(plain: String, encoded: String) {
        var output = Array("[".utf8) + Array(repeating: UInt8(ascii: "?"), count: encoded.utf8.count) + Array("]".utf8)
        URLSafeBase64.write(Array(plain.utf8), range: 0..<plain.utf8.count, into: &output, at: 1)
        #expect(String(decoding: output, as: UTF8.self) == "[" + encoded + "]")
    }

    @Test func usesURLSafeAlphabet() {
        #expect(URLSafeBase64.encode([0xFB, 0xFF, 0xFE]) == "-__-")
        #expect(URLSafeBase64.decode("-__-") == [0xFB, 0xFF, 0xFE])
    }

    @Test(arguments: ["Zg", "Zm8", "Zm9vYg", "Zm9vYmE"])
    func acceptsUnpadded(_ text: String) {
        #expect(URLSafeBase64.decode(text) == URLSafeBase64.decode(text + String(repeating: "=", count: (4 - text.count % 4) % 4)))
        #expect(URLSafeBase64.decode(text) != nil)
    }

    @Test(arguments: ["+/+/", "Zg=a", "Z===", "Zg=", "Zm9vY", "Zm9v====", "Zm 9v", "Zm9v\n", "=", "é=", "Zh==", "Zm9=", "ecymgRTLfTGN1cuFfAx5Bn0ZP4V="])
    func rejectsInvalid(_ text: String) {
        #expect(URLSafeBase64.decode(text) == nil)
    }

    @Test func roundTripsAllLengths() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) }
            let encoded = URLSafeBase64.encode(bytes)
            #expect(encoded.count % 4 == 0)
            #expect(URLSafeBase64.decode(encoded) == bytes)
            #expect(URLSafeBase64.decode(encoded.filter { $0 != "=" }) == bytes)
        }
    }
}
