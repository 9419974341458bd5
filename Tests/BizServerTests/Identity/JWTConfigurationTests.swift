import BizServer
import Foundation
import Basics
import ServerShell
import Testing

/// The `jwt` block and the per-user client keys: names pinned by issue 11, mistakes refused
/// with one line naming the key (the shell's strict reader words the unknown, repeated and
/// mistyped ones like every other key of the file).
@Suite("jwt configuration")
struct JWTConfigurationTests {
    /// A JWKS with the RFC 7515 A.2 key, in a temporary file.
    static let jwksPath: String = {
        let path = FileManager.default.temporaryDirectory.appending(path: "jwks-\(UUID().uuidString).json").path
        let jwks = #"{"keys":[{"kty":"RSA","kid":"rfc","alg":"RS256","n":"\#(JWKSetTests.n)","e":"AQAB"}]}"#
        _ = FileManager.default.createFile(atPath: path, contents: Data(jwks.utf8))
        return path
    }()

    static func load(
        jwt: String, client: String = "", environment: [String: String] = [:]
    ) throws -> BizServerConfiguration {
        let json = """
            {"accessKey":"ak","secretKey":"sk","clients":[{"id":"app","bucket":"b","apiKeySHA256":"\(String(repeating: "a", count: 64))"\(client)}],
             "jwt":\(jwt)}
            """
        return try BizServerConfiguration.load(json: Data(json.utf8), environment: environment)
    }

    static var fileBlock: String {
        #"{"jwksFile":"\#(jwksPath)","issuer":"https://auth.example.com/","audience":"upgate","client":"app""#
    }

    @Test func loadsTheBlockWithItsDefaults() throws {
        let configuration = try Self.load(
            jwt: Self.fileBlock + #","jwksURL":null,"hs256Secret":null,"_comment":"dev"}"#,
            client: #","tokensPerMinutePerUser":5,"maxBytesPerUserPerDay":1048576"#)
        let jwt = try #require(configuration.jwt)
        guard case .file(let path, _) = jwt.keys else { Issue.record("keys \(jwt.keys)"); return }
        #expect(path == Self.jwksPath)
        #expect(jwt.issuer == "https://auth.example.com/" && jwt.audience == "upgate" && jwt.client == "app")
        #expect(jwt.keyPrefix == "users/{sub}/" && jwt.leewaySeconds == 60 && jwt.hs256Secret == nil)
        #expect(jwt.perUser == .init(tokensPerMinute: 5, maxBytesPerDay: 1_048_576))
        #expect(try BizServerConfiguration.load(json: Data(#"{"accessKey":"a","secretKey":"s"}"#.utf8), environment: [:]).jwt == nil)
    }

    @Test func theSecretComesFromTheEnvironmentFirstAndTheURLIsKept() throws {
        let secret = String(repeating: "s", count: 32)
        let block = #"{"jwksURL":"https://auth.example.com/.well-known/jwks.json","hs256Secret":"\#(String(repeating: "f", count: 40))","issuer":"i","audience":"a","client":"app","keyPrefix":"t/{sub}/in/","leewaySeconds":0}"#
        let jwt = try #require(try Self.load(jwt: block, environment: ["UPGATE_JWT_HS256_SECRET": secret]).jwt)
        #expect(jwt.hs256Secret == secret)
        guard case .url(let url) = jwt.keys else { Issue.record("keys \(jwt.keys)"); return }
        #expect(url == "https://auth.example.com/.well-known/jwks.json")
        #expect(jwt.keyPrefix == "t/{sub}/in/" && jwt.leewaySeconds == 0)
    }

    static let base = #""issuer":"i","audience":"a","client":"app""#

    @Test(arguments: [
        (#"{"jwksUrl":"https://x/","issuer":"i","audience":"a","client":"app"}"#, "",
         #"unknown key "jwt.jwksUrl" in the configuration (did you mean "jwt.jwksURL"?)"#),
        (#"{"jwksFile":"/nonexistent/jwks.json",\#(base)}"#, "",
         "jwt.jwksFile: cannot read /nonexistent/jwks.json (paths are relative to the working directory)"),
        (#"{"jwksFile":"F","jwksURL":"https://x/",\#(base)}"#, "", "jwt: give jwksFile or jwksURL, not both"),
        (#"{"jwksURL":"http://auth.example.com/jwks",\#(base)}"#, "",
         "jwt.jwksURL must be https:// (http:// only on loopback): http://auth.example.com/jwks"),
        (#"{"jwksURL":"ftp://x/",\#(base)}"#, "", "jwt.jwksURL must be https:// (http:// only on loopback): ftp://x/"),
        (#"{\#(base)}"#, "", "jwt needs jwksFile, jwksURL or hs256Secret (or UPGATE_JWT_HS256_SECRET)"),
        (#"{"hs256Secret":"short",\#(base)}"#, "", "jwt.hs256Secret must be at least 32 bytes"),
        (#"{"jwksURL":"https://x/","audience":"a","client":"app"}"#, "", "jwt.issuer is required (the tokens' iss)"),
        (#"{"jwksURL":"https://x/","issuer":"i","client":"app"}"#, "", "jwt.audience is required (an aud of the tokens)"),
        (#"{"jwksURL":"https://x/","issuer":"i","audience":"a"}"#, "", "jwt.client is required (a clients[] id)"),
        (#"{"jwksURL":"https://x/","issuer":"i","audience":"a","client":"nope"}"#, "",
         "jwt.client 'nope' names no entry of clients[]"),
        (#"{"jwksURL":"https://x/",\#(base),"keyPrefix":"users/{sub}"}"#, "",
         "jwt.keyPrefix must contain {sub}/ exactly once, e.g. users/{sub}/"),
        (#"{"jwksURL":"https://x/",\#(base),"keyPrefix":"users/"}"#, "",
         "jwt.keyPrefix must contain {sub}/ exactly once, e.g. users/{sub}/"),
        (#"{"jwksURL":"https://x/",\#(base),"keyPrefix":"{sub}/{sub}/"}"#, "",
         "jwt.keyPrefix must contain {sub}/ exactly once, e.g. users/{sub}/"),
        (#"{"jwksURL":"https://x/",\#(base),"leewaySeconds":301}"#, "", #""jwt.leewaySeconds" in the configuration must be an integer 0…300, got 301"#),
        (#"{"jwksURL":"https://x/",\#(base),"leewaySeconds":"60"}"#, "", #""jwt.leewaySeconds" in the configuration must be an integer 0…300, got "60""#),
        (#"{"jwksURL":7,\#(base)}"#, "", #""jwt.jwksURL" in the configuration must be a string, got 7"#),
        (#"{"jwksURL":"https://x/",\#(base),"issuer":"j"}"#, "", #""jwt.issuer" in the configuration is given twice"#),
        (#""x""#, "", #""jwt" in the configuration must be an object, got "x""#),
        (#"{"jwksURL":"https://x/",\#(base)}"#, #","tokensPerMinutePerUser":0"#,
         #""clients[0].tokensPerMinutePerUser" in the configuration must be a positive integer, got 0"#),
        (#"{"jwksURL":"https://x/",\#(base)}"#, #","maxBytesPerUserPerDay":"1G""#,
         #""clients[0].maxBytesPerUserPerDay" in the configuration must be an integer, got "1G""#),
        ("null", #","tokensPerMinutePerUser":5"#,
         "client 'app': tokensPerMinutePerUser and maxBytesPerUserPerDay limit JWT users; add a jwt block naming it"),
    ])
    func refusesMistakesWithOneLine(jwt: String, client: String, message: String) {
        #expect(throws: ConfigurationError(message)) { try Self.load(jwt: jwt, client: client) }
    }

    @Test func aJWKSFileMustHoldOnlyUsableKeys() throws {
        let path = FileManager.default.temporaryDirectory.appending(path: "jwks-bad-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#.utf8))
        #expect(throws: ConfigurationError(
            #"jwt.jwksFile \#(path): key 1: holds secret key material ("k"): publish only public keys"#)) {
            try Self.load(jwt: #"{"jwksFile":"\#(path)",\#(Self.base)}"#)
        }
        _ = FileManager.default.createFile(atPath: path, contents: Data(#"{"keys":[]}"#.utf8))
        #expect(throws: ConfigurationError("jwt.jwksFile \(path): the JWKS has no signature key")) {
            try Self.load(jwt: #"{"jwksFile":"\#(path)",\#(Self.base)}"#)
        }
    }

    @Test func theSecretVariableWithoutABlockIsAMistake() {
        #expect(throws: ConfigurationError("UPGATE_JWT_HS256_SECRET is set, but the configuration has no jwt block")) {
            try BizServerConfiguration.load(
                json: Data(#"{"accessKey":"a","secretKey":"s"}"#.utf8),
                environment: ["UPGATE_JWT_HS256_SECRET": String(repeating: "s", count: 32)])
        }
    }

    @Test func perUserKeysBelongToTheJWTClient() throws {
        let json = """
            {"accessKey":"ak","secretKey":"sk","clients":[
              {"id":"app","bucket":"b","apiKeySHA256":"\(String(repeating: "a", count: 64))"},
              {"id":"other","bucket":"b","apiKeySHA256":"\(String(repeating: "b", count: 64))","maxBytesPerUserPerDay":5}],
             "jwt":{"jwksURL":"https://x/","issuer":"i","audience":"a","client":"app"}}
            """
        #expect(throws: ConfigurationError(
            "client 'other': tokensPerMinutePerUser and maxBytesPerUserPerDay limit JWT users, but jwt.client is 'app'")) {
            try BizServerConfiguration.load(json: Data(json.utf8), environment: [:])
        }
    }
}
