@testable import BizServer
import Testing

/// Claims and the checks made on them, with the time passed in: pure, table-tested.
@Suite("JWT claims")
struct JWTClaimsTests {
    static let policy = JWTClaimsPolicy(issuer: "https://auth.test/", audience: "upgate", leewaySeconds: 60)
    static let now = 1_900_000_000.0

    static func claims(_ json: String) throws(JWTRefusal) -> JWTClaims { try JWTClaims.parse(Array(json.utf8)) }

    @Test func parsesTheRegisteredClaimsAndIgnoresTheRest() throws {
        let parsed = try Self.claims(
            #"{"iss":"i","sub":"s","aud":["a","b"],"exp":1.5,"nbf":2,"iat":3,"email":"x@y","roles":["admin"]}"#)
        #expect(parsed == JWTClaims(issuer: "i", subject: "s", audience: ["a", "b"], expiresAt: 1.5, notBefore: 2, issuedAt: 3))
        #expect(try Self.claims(#"{"aud":"a","sub":null}"#) == JWTClaims(audience: ["a"]))
    }

    @Test(arguments: [
        (#"{"exp":"1900000000"}"#, "exp must be a number (NumericDate)"),
        (#"{"nbf":true}"#, "nbf must be a number (NumericDate)"),
        (#"{"iat":[1]}"#, "iat must be a number (NumericDate)"),
        (#"{"sub":1}"#, "sub must be a string"),
        (#"{"iss":{}}"#, "iss must be a string"),
        (#"{"aud":7}"#, "aud must be a string or an array of strings"),
        (#"{"aud":["a",7]}"#, "aud must be a string or an array of strings"),
        (#"{"sub":"a","sub":"b"}"#, "claim 'sub' appears twice"),
        (#"[]"#, "claims are not a JSON object"),
        (#"{"sub":"a",}"#, "claims are not a JSON object"),
    ])
    func refusesClaimsOfTheWrongType(json: String, problem: String) {
        #expect(throws: JWTRefusal.malformed(problem)) { try Self.claims(json) }
        do { _ = try Self.claims(json) } catch { #expect(error.detail == problem) }
    }

    static let good = #""iss":"https://auth.test/","aud":"upgate","sub":"u1""#

    @Test(arguments: [
        (#"{\#(good),"exp":1900000001}"#, nil),
        (#"{\#(good),"exp":1899999941}"#, nil),  // 59 s late: within the leeway
        (#"{\#(good),"exp":1899999940}"#, JWTRefusal.Reason.expired),  // exactly at exp + leeway
        (#"{\#(good),"exp":1899999000}"#, .expired),
        (#"{\#(good)}"#, .missingExpiry),
        (#"{\#(good),"exp":1900000600,"nbf":1900000060}"#, nil),  // starts in 60 s: within the leeway
        (#"{\#(good),"exp":1900000600,"nbf":1900000061}"#, .notYetValid),
        (#"{"iss":"https://auth.test","aud":"upgate","sub":"u1","exp":1900000600}"#, .wrongIssuer),
        (#"{"aud":"upgate","sub":"u1","exp":1900000600}"#, .wrongIssuer),
        (#"{"iss":"https://auth.test/","aud":["x","upgate"],"sub":"u1","exp":1900000600}"#, nil),
        (#"{"iss":"https://auth.test/","aud":["x","UPGATE"],"sub":"u1","exp":1900000600}"#, .wrongAudience),
        (#"{"iss":"https://auth.test/","aud":[],"sub":"u1","exp":1900000600}"#, .wrongAudience),
        (#"{"iss":"https://auth.test/","sub":"u1","exp":1900000600}"#, .wrongAudience),
        (#"{"iss":"https://auth.test/","aud":"upgate","exp":1900000600}"#, .missingSubject),
        (#"{"iss":"https://auth.test/","aud":"upgate","sub":"a/b","exp":1900000600}"#, .badSubject),
    ] as [(String, JWTRefusal.Reason?)])
    func checksTimeIssuerAudienceAndSubject(json: String, refusal: JWTRefusal.Reason?) throws {
        let claims = try Self.claims(json)
        do {
            #expect(try Self.policy.subject(of: claims, now: Self.now) == "u1")
            #expect(refusal == nil, "accepted \(json)")
        } catch {
            #expect(error.reason == refusal, "\(json)")
        }
    }

    @Test func withoutLeewayTheBoundariesAreExact() throws {
        let strict = JWTClaimsPolicy(issuer: "i", audience: "a", leewaySeconds: 0)
        let claims = JWTClaims(issuer: "i", subject: "s", audience: ["a"], expiresAt: 100, notBefore: 50)
        #expect(try strict.subject(of: claims, now: 99.9) == "s")
        #expect(throws: JWTRefusal(.expired)) { try strict.subject(of: claims, now: 100) }
        #expect(try strict.subject(of: claims, now: 50) == "s")
        #expect(throws: JWTRefusal(.notYetValid)) { try strict.subject(of: claims, now: 49.9) }
    }
}
