@testable import BizServer
import Testing

/// The digest a configured key is looked up by is the SHA-256 the configuration stores as hex.
@Suite("APIKeyDigest")
struct APIKeyDigestTests {
    @Test(arguments: ["dev-api-key", "demo-api-key", "", "upk_0123456789abcdef", "clé-é"])
    func isTheStoredSHA256(key: String) throws {
        let hex = BizServerConfiguration.apiKeyHash(key)
        let digest = APIKeyDigest(of: key)
        #expect(digest.hex == hex)
        #expect(APIKeyDigest(hex: hex) == digest)
        #expect(APIKeyDigest(hex: hex.uppercased()) == digest)
        #expect(APIKeyDigest(of: key + "x") != digest)
    }

    @Test func theDevelopmentKeyMatchesItsConfiguredHash() {
        let configured = "6e1e4e1b8f8b36d08901cdb51b97841dfe20f5efd2fd2fd00768971408c46274"
        #expect(APIKeyDigest(hex: configured) == APIKeyDigest(of: "dev-api-key"))
    }

    @Test(arguments: ["", "abc", String(repeating: "g", count: 64), String(repeating: "a", count: 62), String(repeating: "a", count: 66)])
    func refusesWhatIsNot64HexDigits(_ text: String) {
        #expect(APIKeyDigest(hex: text) == nil)
    }
}
