import NativeCrypto
import Testing

/// HMAC-SHA256 against RFC 4231 (cases 1, 2 and 6: short key, text key, key longer than a block).
@Suite("HMAC-SHA256")
struct HMACTests {
    @Test(arguments: [
        ([UInt8](repeating: 0x0b, count: 20), "Hi There",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), "what do ya want for nothing?",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ])
    func matchesRFC4231(key: [UInt8], data: String, expected: String) {
        let mac = HMAC(.sha256, key: key)
        #expect(Hex.encode(mac.authenticationCode(for: Array(data.utf8))) == expected)
        #expect(Hex.encode(mac.authenticationCode(for: Array(data.utf8))) == expected, "reusable")
        let bytes = Array(data.utf8)
        #expect(Hex.encode(mac.authenticationCode(forParts: [Array(bytes.prefix(3)), Array(bytes.dropFirst(3))])) == expected)
    }

    /// One instance serves all threads, and its re-armed contexts carry nothing over from one
    /// message to the next: many threads at once, messages of different lengths, interleaved,
    /// each code checked against RFC 4231 case 2 or a fresh instance's.
    @Test func reusedContextsAreCleanAcrossThreads() async {
        let key = Array("Jefe".utf8)
        let shared = HMAC(.sha256, key: key)
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<32 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<50 {
                        let other = Array(repeating: UInt8(truncatingIfNeeded: task), count: round * 7 + task)
                        if Hex.encode(shared.authenticationCode(for: other)) != Hex.encode(HMAC(.sha256, key: key).authenticationCode(for: other)) {
                            mismatches += 1
                        }
                        if Hex.encode(shared.authenticationCode(for: Array("what do ya want for nothing?".utf8))) != expected {
                            mismatches += 1
                        }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }
}
