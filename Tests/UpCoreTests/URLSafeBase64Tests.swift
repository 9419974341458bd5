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
