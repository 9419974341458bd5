@testable import BizServer
import Testing
import UpCore

/// Turning a JWKS into keys: the algorithm comes from the key, and what cannot be used is said.
/// Key material from RFC 7515 A.2 (RSA) and A.3 (P-256), RFC 8037 A.4 (Ed25519).
@Suite("JWK sets")
struct JWKSetTests {
    static let n = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let rsa = #""kty":"RSA","n":"\#(n)","e":"AQAB""#
    static let ec = #""kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0""#
    static let ed = #""kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo""#

    static func parse(_ keys: String...) throws -> JWKSet {
        try JWKSet.parse(Array(#"{"keys":[\#(keys.joined(separator: ","))],"_comment":"ignored"}"#.utf8))
    }

    @Test func theAlgorithmComesFromTheKeyTypeWhenNotDeclared() throws {
        let set = try Self.parse("{\(Self.rsa),\"kid\":\"r\"}", "{\(Self.ec),\"kid\":\"e\"}", "{\(Self.ed)}")
        #expect(set.keys.map(\.algorithm) == [.rs256, .es256, .edDSA])
        #expect(set.keys.map(\.keyID) == ["r", "e", nil])
        #expect(set.notes.isEmpty)
    }

    @Test func aDeclaredAlgMustFitTheKey() throws {
        let set = try Self.parse(
            "{\(Self.rsa),\"alg\":\"RS256\",\"kid\":\"ok\"}", "{\(Self.rsa),\"alg\":\"ES256\",\"kid\":\"a\"}",
            "{\(Self.rsa),\"alg\":\"HS256\",\"kid\":\"b\"}", "{\(Self.ec),\"alg\":\"EdDSA\",\"kid\":\"c\"}",
            "{\(Self.rsa),\"alg\":\"PS256\",\"kid\":\"d\"}")
        #expect(set.keys.map(\.keyID) == ["ok"])
        #expect(set.notes == [
            #"key 2 (kid "a"): alg ES256 does not fit a RSA key"#,
            #"key 3 (kid "b"): alg "HS256" is not supported (RS256, ES256, EdDSA)"#,
            #"key 4 (kid "c"): alg EdDSA does not fit a EC key"#,
            #"key 5 (kid "d"): alg "PS256" is not supported (RS256, ES256, EdDSA)"#,
        ])
    }

    @Test func keysForOtherUsesAreLeftOutSilently() throws {
        let set = try Self.parse(
            "{\(Self.rsa),\"use\":\"enc\",\"kid\":\"enc\"}", "{\(Self.rsa),\"key_ops\":[\"encrypt\"]}",
            "{\(Self.rsa),\"use\":\"sig\",\"key_ops\":[\"verify\"],\"kid\":\"sig\"}")
        #expect(set.keys.map(\.keyID) == ["sig"])
        #expect(set.notes.isEmpty)
    }

    @Test func unusableKeysAreLeftOutWithANote() throws {
        let modulus = URLSafeBase64.encode(Array(URLSafeBase64.decode(Self.n)!.prefix(128))).prefix { $0 != "=" }
        let short = #""kty":"RSA","n":"\#(modulus)","e":"AQAB""#
        let set = try Self.parse(
            "{\(short),\"kid\":\"short\"}", #"{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}"#,
            #"{"kty":"oct","k":"c2VjcmV0"}"#, "{\(Self.rsa),\"d\":\"AQAB\"}", #"{"kty":"EC","crv":"P-256","x":"f83O","y":"x_FE"}"#,
            #"{"kty":"RSA","n":"!!","e":"AQAB"}"#, #"{"n":"AQAB"}"#)
        #expect(set.keys.isEmpty)
        #expect(set.notes == [
            #"key 1 (kid "short"): RSA key of 1024 bits, under 2048"#,
            #"key 2: curve "P-384" is not supported (P-256, Ed25519)"#,
            #"key 3: holds secret key material ("k"): publish only public keys"#,
            #"key 4: holds secret key material ("d"): publish only public keys"#,
            "key 5: P-256 coordinates must be 32 bytes each",
            #"key 6: "n" is not base64url"#,
            "key 7: no kty",
        ])
    }

    @Test(arguments: [
        (#"{"keys":{}}"#, #"no "keys" array"#),
        (#"[]"#, "not a JSON object"),
        (#"{"keys":[1]}"#, "key 1 is not an object"),
        (#"{"keys":[],"keys":[]}"#, "member 'keys' appears twice"),
        (#"{"keys":[{"kty":"RSA","kty":"EC"}]}"#, "key 1: member 'kty' appears twice"),
        ("{\"keys\":[{\(rsa),\"kid\":\"x\"},{\(ec),\"kid\":\"x\"}]}", #"kid "x" appears twice"#),
    ])
    func refusesWhatIsNotAKeySet(json: String, problem: String) {
        #expect(throws: JWKSet.Invalid.self) { try JWKSet.parse(Array(json.utf8)) }
        do { _ = try JWKSet.parse(Array(json.utf8)) } catch { #expect(error.description == problem) }
    }
}
