@testable import BizServer
import Testing

@Suite struct IssuedAPIKeyTests {
    @Test func keysAreUpkAnd192RandomBitsInHexAndIdsAreKeyTimeAndRandom() {
        var keys = Set<String>()
        var ids = Set<String>()
        for _ in 0..<1000 {
            let issued = IssuedAPIKey.generate(milliseconds: 1_796_158_450_123)
            #expect(issued.key.hasPrefix("upk_") && issued.key.utf8.count == 4 + 48)
            #expect(issued.key.dropFirst(4).allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(issued.id.hasPrefix("key_01a23362e9cb") && issued.id.utf8.count == 4 + 24)  // 1796158450123 in hex
            #expect(!issued.key.contains("."))  // never mistaken for a JWT
            #expect(issued.sha256 == BizServerConfiguration.apiKeyHash(issued.key))
            keys.insert(issued.key)
            ids.insert(issued.id)
        }
        #expect(keys.count == 1000 && ids.count == 1000)
    }

    /// Every hex digit shows up in every position over many keys: the bytes are not constant or
    /// truncated (a weak check of randomness; SecureRandom itself is OpenSSL's DRBG).
    @Test func everyPositionVaries() {
        let keys = (0..<400).map { _ in Array(IssuedAPIKey.generate(milliseconds: 0).key.utf8.dropFirst(4)) }
        for position in 0..<48 {
            #expect(Set(keys.map { $0[position] }).count == 16, "position \(position)")
        }
    }

    @Test func idsSortInCreationOrder() {
        let times: [Int64] = [0, 1, 999, 1000, 1_796_158_450_123, 1_796_158_450_124, (1 << 48) - 1]
        let ids = times.map { IssuedAPIKey.generate(milliseconds: $0).id }
        #expect(ids == ids.sorted())
        #expect(ids[0].hasPrefix("key_000000000000"))
        #expect(ids.allSatisfy { $0.utf8.count == 28 })
    }
}
