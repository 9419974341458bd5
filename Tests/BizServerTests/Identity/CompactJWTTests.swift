@testable import BizServer
import Testing
import UpCore

/// The structure of a compact JWT, before any key is involved: pure, table-tested.
@Suite("Compact JWT structure")
struct CompactJWTTests {
    static func part(_ text: String) -> String {
        String(URLSafeBase64.encode(Array(text.utf8)).prefix { $0 != "=" })
    }

    static func token(header: String, claims: String = #"{"sub":"u"}"#, signature: String = "c2ln") -> String {
        part(header) + "." + part(claims) + "." + signature
    }

    @Test(arguments: [
        ("a.b.c", true), ("a.b.", true), ("eyJ.eyJ.sig-_", true),
        ("a.b", false), ("a.b.c.d", false), (".b.c", false), ("a..c", false), ("a.b.c=", false),
        ("a+b.c.d", false), ("dev-api-key", false), ("", false), ("a.b.c ", false),
    ])
    func theShapeDecidesWhetherABearerIsAJWT(bearer: String, isJWT: Bool) {
        #expect(CompactJWT.looksLikeJWT(bearer) == isJWT)
    }

    @Test func splitsAndDecodes() throws {
        let jwt = try CompactJWT.parse(Self.token(header: #"{"alg":"RS256","kid":"k1","typ":"JWT"}"#))
        #expect(jwt.algorithm == "RS256" && jwt.keyID == "k1")
        #expect(jwt.payload == Array(#"{"sub":"u"}"#.utf8))
        #expect(jwt.signature == Array("sig".utf8))
        #expect(String(decoding: jwt.signingInput, as: UTF8.self).split(separator: ".").count == 2)
    }

    static let malformed: [(token: String, problem: String)] = [
        (token(header: #"{"alg":"none"}"#, signature: ""), "alg_none"),
        (token(header: #"{"alg":"NONE","kid":"k"}"#), "alg_none"),
        (token(header: #"{"kid":"k"}"#), "header has no alg string"),
        (token(header: #"{"alg":256}"#), "header has no alg string"),
        (token(header: #"{"alg":"RS256","kid":7}"#), "kid must be a string"),
        (token(header: #"{"alg":"RS256","alg":"HS256"}"#), "header member 'alg' appears twice"),
        (token(header: #"{"alg":"RS256","crit":["exp"]}"#), "crit extensions are not supported"),
        (token(header: #"["RS256"]"#), "header is not a JSON object"),
        (token(header: #"{"alg":"RS256""#), "header is not a JSON object"),
        (part(#"{"alg":"RS256"}"#) + "=." + part("{}") + ".c2ln", "header is not base64url"),
        (part(#"{"alg":"RS256"}"#) + ".e30.c2ln=", "signature is not base64url"),
        (part(#"{"alg":"RS256"}"#) + ".e3+.c2ln", "claims are not base64url"),
        (part(#"{"alg":"RS256"}"#) + ".e30.c2l", "signature is not base64url"),  // non-canonical trailing bits
        ("a.b", "not three dot-separated base64url parts"),
        (token(header: #"{"alg":"RS256"}"#) + ".x", "not three dot-separated base64url parts"),
        (token(header: #"{"alg":"RS256"}"#, signature: String(repeating: "A", count: 8200)), "longer than 8192 bytes"),
    ]

    @Test(arguments: malformed)
    func refusesWhatIsNotAWellFormedJWS(token: String, problem: String) {
        do {
            _ = try CompactJWT.parse(token)
            Issue.record("accepted \(token.prefix(60))")
        } catch {
            #expect(error.reason == .algNone ? problem == "alg_none" : error.detail == problem, "\(error)")
        }
    }
}
