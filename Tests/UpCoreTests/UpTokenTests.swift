import NativeCrypto
import Testing
import UpCore

@Suite("UpToken")
struct UpTokenTests {
    static let keys = KeyRing(["test-ak": "test-sk"])
    static let mac = HMACSHA1(key: Array("test-sk".utf8))
    /// §10.1 (a).
    static let sdkToken =
        "test-ak:ecymgRTLfTGN1cuFfAx5Bn0ZP4U=:eyJzY29wZSI6Im15YnVja2V0IiwiZGVhZGxpbmUiOjE5MDAwMDAwMDB9"

    static func signed(_ json: String) -> String { UpToken.sign(policyJSON: json, accessKey: "test-ak", mac: mac) }

    static let rejections: [(String, String, UpError.Code)] = [
        ("two fields", "test-ak:ecymgRTLfTGN1cuFfAx5Bn0ZP4U=", .badToken),
        ("four fields", sdkToken + ":x", .badToken),
        ("empty", "", .badToken),
        ("unknown AK", "other-ak:ecymgRTLfTGN1cuFfAx5Bn0ZP4U=:eyJzY29wZSI6Im15YnVja2V0IiwiZGVhZGxpbmUiOjE5MDAwMDAwMDB9", .unknownAccessKey),
        ("tampered policy", "test-ak:ecymgRTLfTGN1cuFfAx5Bn0ZP4U=:" + URLSafeBase64.encode(#"{"scope":"other","deadline":1900000000}"#.utf8), .badSignature),
        ("tampered signature", "test-ak:ecymgRTLfTGN1cuFfAx5Bn0ZP4V=:eyJzY29wZSI6Im15YnVja2V0IiwiZGVhZGxpbmUiOjE5MDAwMDAwMDB9", .badSignature),
        ("signature not base64", "test-ak:!!!!:eyJzY29wZSI6Im15YnVja2V0IiwiZGVhZGxpbmUiOjE5MDAwMDAwMDB9", .badSignature),
        ("policy not base64", "test-ak:" + URLSafeBase64.encode(mac.authenticationCode(for: Array("e30*".utf8))) + ":e30*", .badToken),
        ("non-object JSON", signed("[1,2]"), .badToken),
        ("not JSON", signed("scope=b"), .badToken),
        ("no scope", signed(#"{"deadline":1900000000}"#), .badToken),
        ("no deadline", signed(#"{"scope":"b"}"#), .badToken),
        ("expired", signed(#"{"scope":"b","deadline":999}"#), .expiredToken),
    ]

    @Test("Rejections carry the right code", arguments: rejections)
    func rejects(name: String, token: String, code: UpError.Code) {
        #expect(throws: UpError(code)) { try UpToken.verify(token, keys: Self.keys, now: 1000) }
    }

    @Test func signingIntoABufferAppendsTheSDKToken() {
        // §10.1 (a): the official SDK's token for this JSON, byte for byte, after what was there.
        var output = Array(#"{"uptoken":""#.utf8)
        UpToken.sign(
            policyJSON: Array(#"{"scope":"mybucket","deadline":1900000000}"#.utf8), accessKey: "test-ak", mac: Self.mac,
            appendingTo: &output)
        #expect(String(decoding: output, as: UTF8.self) == #"{"uptoken":""# + Self.sdkToken)
    }

    @Test func signingAPolicyIntoABufferVerifies() throws {
        var policy = PutPolicy(scope: "mybucket:a/b", deadline: 1_900_000_000)
        policy.callbackBody = "key=$(key)&x=%22"
        policy.fsizeLimit = 1
        var output: [UInt8] = []
        UpToken.sign(policy, accessKey: "test-ak", mac: Self.mac, appendingTo: &output)
        #expect(String(decoding: output, as: UTF8.self) == UpToken.sign(policy, accessKey: "test-ak", mac: Self.mac))
        #expect(try UpToken.verify(String(decoding: output, as: UTF8.self), keys: Self.keys, now: 1000).policy == policy)
    }

    @Test func clientTextNeverRevealsWhichAuthCheckFailed() {
        #expect(UpError.Code.unknownAccessKey.message == "bad token")
        #expect(UpError.Code.badSignature.message == "bad token")
    }

    @Test func expiresOneSecondAfterDeadline() throws {
        let policy = PutPolicy(scope: "b:k", deadline: 2_000)
        let token = UpToken.sign(policy, accessKey: "test-ak", mac: Self.mac)
        let verified = try UpToken.verify(token, keys: Self.keys, now: 2_000)
        #expect(verified.policy == policy)
        #expect(verified.accessKey == "test-ak")
        #expect(throws: UpError(.expiredToken)) { try UpToken.verify(token, keys: Self.keys, now: 2_001) }
    }

    @Test func acceptsUnpaddedSignatureAndPolicy() throws {
        let unpadded = Self.sdkToken.replacingOccurrencesOfEquals()
        let verified = try UpToken.verify(unpadded, keys: Self.keys, now: 0)
        #expect(verified.policy.scope == "mybucket")
    }

    @Test func signedPolicyRoundTripsWithUnknownFieldsAndNonASCII() throws {
        var policy = PutPolicy(scope: "b:七牛/a", deadline: 10)
        policy.unknownFields = [("traceId", .string("t-1")), ("x", .array([.int(1)]))]
        policy.callbackUrl = "http://h/cb?x=1"
        let verified = try UpToken.verify(UpToken.sign(policy, accessKey: "test-ak", mac: Self.mac), keys: Self.keys, now: 10)
        #expect(verified.policy == policy)
        #expect(verified.policy.unknownFields.map(\.key) == ["traceId", "x"])
    }

    @Test func authorizationHeader() throws {
        #expect(try UpToken.token(fromAuthorization: "UpToken a:b:c") == "a:b:c")
        #expect(throws: UpError(.badToken)) { try UpToken.token(fromAuthorization: nil) }
        #expect(throws: UpError(.badToken)) { try UpToken.token(fromAuthorization: "QBox a:b") }
    }

    /// Found by scripts/fuzz/libfuzzer (policy): a combining mark after "UpToken " joined the
    /// space in one Character and was dropped with the prefix, so "UpToken \u{0616}a:b:c" read
    /// as the token "a:b:c".
    @Test func authorizationHeaderIsCutByBytes() throws {
        #expect(try UpToken.token(fromAuthorization: "UpToken \u{0616}a:b:c") == "\u{0616}a:b:c")
        #expect(try UpToken.token(fromAuthorization: "UpToken \u{0301}") == "\u{0301}")
    }
}

extension String {
    fileprivate func replacingOccurrencesOfEquals() -> String { filter { $0 != "=" } }
}
