@testable import BizServer
import Testing

@Suite struct IssuedAPIKeyTests {
    @Test func keysAreUpkAnd192RandomBitsInHexAndIdsAreKeyAnd64Bits() {
        var keys = Set<String>()
        var ids = Set<String>()
        for _ in 0..<1000 {
            let issued = IssuedAPIKey.generate()
            #expect(issued.key.hasPrefix("upk_") && issued.key.utf8.count == 4 + 48)
            #expect(issued.key.dropFirst(4).allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(issued.id.hasPrefix("key_") && issued.id.utf8.count == 4 + 16)
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
        let keys = (0..<400).map { _ in Array(IssuedAPIKey.generate().key.utf8.dropFirst(4)) }
        for position in 0..<48 {
            #expect(Set(keys.map { $0[position] }).count == 16, "position \(position)")
        }
    }
}
