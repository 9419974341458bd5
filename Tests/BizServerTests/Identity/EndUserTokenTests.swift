import Basics
import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore

/// `POST /v1/uptoken` with an end user's JWT (issue 11 §1), driven in-process with tokens that
/// PyJWT signed at the harness's pinned time.
@Suite("POST /v1/uptoken with an end user's JWT")
struct EndUserTokenTests {
    static func harness(
        perUser: JWTConfiguration.PerUserLimits = .init(),
        rateLimit: BizServerConfiguration.RateLimit = .init(tokensPerSecond: 1000, burst: 1000)
    ) async throws -> (BizServerHarness, JWTFixture) {
        let fixture = try await JWTFixture.load()
        return (BizServerHarness(rateLimit: rateLimit, jwt: try fixture.configuration(perUser: perUser)), fixture)
    }

    @Test(arguments: ["valid_rs256", "valid_es256", "valid_eddsa", "valid_hs256", "valid_hs256_with_kid",
                      "valid_aud_array", "valid_expired_within_leeway", "valid_nbf_within_leeway"])
    func aValidTokenGetsAnUploadTokenForItsSubject(name: String) async throws {
        let (harness, fixture) = try await Self.harness()
        let (response, policy) = try await harness.issuedPolicy(#"{"key":"users/user-42/a.jpg"}"#, jwt: fixture.token(name))
        #expect(response["bucket"] as? String == "demo")
        #expect(policy.scope == "demo:users/user-42/a.jpg")
        #expect(policy.endUser == "user-42")
        // The client entry's settings apply: its limits, its vars, its callback.
        #expect(policy.fsizeMin == 1 && policy.fsizeLimit == 1 << 30)
        #expect(policy.callbackBody?.contains("clientId=demo") == true)
        #expect(policy.callbackBody?.contains("x%3Aapp=upgate-test") == true)
        #expect(harness.server.metrics.value("upgate_biz_tokens_issued_total", ["demo"]) == 1)
    }

    @Test func withoutAKeyTheObjectIsNamedUnderTheUsersPrefix() async throws {
        let (harness, fixture) = try await Self.harness()
        let (_, policy) = try await harness.issuedPolicy("{}", jwt: fixture.token("valid_auth0_sub"))
        #expect(policy.scope == "demo:users/auth0|5f7c8ec7c33c6c004bbafe82/")
        #expect(policy.isPrefixal && policy.forceSaveKey == true)
        #expect(policy.saveKey == "users/auth0|5f7c8ec7c33c6c004bbafe82/$(etag)$(ext)")
        #expect(policy.endUser == "auth0|5f7c8ec7c33c6c004bbafe82")
    }

    @Test(arguments: ["users/user-4/a", "users/user-42", "users/user-420/a", "demo/a", "users/other/../user-42/a"])
    func aKeyOutsideTheUsersPrefixIs403(key: String) async throws {
        let (harness, fixture) = try await Self.harness()
        let response = await harness.endUserToken(#"{"key":"\#(key)"}"#, jwt: fixture.token("valid_rs256"))
        #expect(response.status == 403, "\(key): \(response.text)")
        #expect(response.errorText == "key doesn't match the allowed prefix")
    }

    @Test(
        "Refusals: status, error and metrics reason",
        arguments: [
            ("alg_none", 401, "unsecured JWT (alg none) refused", "jwt_alg_none"),
            ("alg_None_with_kid", 401, "unsecured JWT (alg none) refused", "jwt_alg_none"),
            ("hs256_rsa_public_key_as_secret", 401, "JWT algorithm does not match its key", "jwt_alg_mismatch"),
            ("hs256_rsa_public_key_as_secret_no_kid", 401, "JWT signature does not verify", "jwt_bad_signature"),
            ("es256_under_rsa_kid", 401, "JWT algorithm does not match its key", "jwt_alg_mismatch"),
            ("rs384_unsupported", 401, "JWT algorithm not supported (RS256, ES256, EdDSA, HS256)", "jwt_unsupported_alg"),
            ("unknown_kid", 401, "JWT key id (kid) not in the key set", "jwt_unknown_kid"),
            ("bad_signature", 401, "JWT signature does not verify", "jwt_bad_signature"),
            ("signed_by_another_key", 401, "JWT signature does not verify", "jwt_bad_signature"),
            ("claims_tampered", 401, "JWT signature does not verify", "jwt_bad_signature"),
            ("hs256_wrong_secret", 401, "JWT signature does not verify", "jwt_bad_signature"),
            ("expired", 401, "JWT expired", "jwt_expired"),
            ("not_yet_valid", 401, "JWT not valid yet (nbf)", "jwt_not_yet_valid"),
            ("missing_exp", 401, "JWT has no exp", "jwt_missing_exp"),
            ("wrong_issuer", 401, "JWT issuer (iss) not accepted", "jwt_wrong_issuer"),
            ("issuer_case_differs", 401, "JWT issuer (iss) not accepted", "jwt_wrong_issuer"),
            ("wrong_audience", 401, "JWT audience (aud) does not name this service", "jwt_wrong_audience"),
            ("audience_array_without_us", 401, "JWT audience (aud) does not name this service", "jwt_wrong_audience"),
            ("missing_audience", 401, "JWT audience (aud) does not name this service", "jwt_wrong_audience"),
            ("missing_sub", 401, "JWT has no sub", "jwt_missing_sub"),
            ("sub_with_slash", 401, "JWT sub cannot be an object key segment", "jwt_bad_sub"),
            ("sub_dotdot", 401, "JWT sub cannot be an object key segment", "jwt_bad_sub"),
            ("sub_control", 401, "JWT sub cannot be an object key segment", "jwt_bad_sub"),
            ("sub_too_long", 401, "JWT sub cannot be an object key segment", "jwt_bad_sub"),
            ("sub_magic_variable", 401, "JWT sub cannot be an object key segment", "jwt_bad_sub"),
            ("sub_empty", 401, "JWT sub cannot be an object key segment", "jwt_bad_sub"),
            ("exp_as_string", 401, "malformed JWT: exp must be a number (NumericDate)", "jwt_malformed"),
            ("sub_as_number", 401, "malformed JWT: sub must be a string", "jwt_malformed"),
            ("duplicate_sub", 401, "malformed JWT: claim 'sub' appears twice", "jwt_malformed"),
            ("claims_not_an_object", 401, "malformed JWT: claims are not a JSON object", "jwt_malformed"),
        ])
    func refuses(name: String, status: Int, error: String, reason: String) async throws {
        let (harness, fixture) = try await Self.harness()
        let token = fixture.token(name)
        let response = await harness.endUserToken(#"{"key":"users/user-42/a"}"#, jwt: token)
        #expect(response.status == status, "\(name): \(response.text)")
        #expect(response.errorText == error, "\(name)")
        #expect(harness.server.metrics.value("upgate_biz_tokens_refused_total", [reason]) == 1, "\(name)")
        #expect(await harness.store.count() == 0)
        // The token is a credential: neither it nor its signature reaches the log.
        let log = harness.logs.capturedLines.joined()
        #expect(log.contains("token refused") && log.contains(reason))
        #expect(!log.contains(token), "\(name): log holds the token")
        if let signature = token.split(separator: ".").dropFirst(2).first, signature.count > 8 {
            #expect(!log.contains(signature), "\(name): log holds the signature")
        }
    }

    @Test func aValidTokensCredentialIsNotLoggedEither() async throws {
        let (harness, fixture) = try await Self.harness()
        let token = fixture.token("valid_rs256")
        #expect(await harness.endUserToken(jwt: token).status == 200)
        let log = harness.logs.capturedLines.joined()
        #expect(log.contains("token issued") && log.contains("\"endUser\":\"user-42\""))
        #expect(!log.contains(token) && !log.contains(String(token.split(separator: ".")[2])))
    }

    @Test(arguments: ["Bearer eyJhbGciOi.eyJzdWIi.c2ln", "Bearer a.b.c"])
    func aMalformedJWTIs401NotABadAPIKey(authorization: String) async throws {
        let (harness, _) = try await Self.harness()
        let response = await harness.send(.post, "/v1/uptoken", headers: ["Authorization": authorization])
        #expect(response.status == 401)
        #expect(response.errorText?.hasPrefix("malformed JWT: ") == true, "\(response.text)")
    }

    @Test func apiKeysStillWorkBesideJWTs() async throws {
        let (harness, _) = try await Self.harness()
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/a"}"#)
        #expect(policy.endUser == "demo" && policy.scope == "demo:demo/a")
        #expect(await harness.token("{}", apiKey: "wrong").status == 401)
    }

    @Test func withoutAJWTBlockAJWTIsJustAnUnknownAPIKey() async throws {
        let fixture = try await JWTFixture.load()
        let harness = BizServerHarness()
        let response = await harness.endUserToken(jwt: fixture.token("valid_rs256"))
        #expect(response.status == 401)
        #expect(response.errorText == "bad API key")
    }

    @Test func theBodyRulesAreTheSameAsWithAnAPIKey() async throws {
        let (harness, fixture) = try await Self.harness()
        let token = fixture.token("valid_rs256")
        let (_, exact) = try await harness.issuedPolicy(#"{"fsize":9,"exactSize":true}"#, jwt: token)
        #expect(exact.fsizeMin == 9 && exact.fsizeLimit == 9)
        let unknown = await harness.endUserToken(#"{"filesize":9}"#, jwt: token)
        #expect(unknown.status == 400 && unknown.errorText == "unknown member 'filesize'")
        let clash = await harness.endUserToken(#"{"vars":{"x:app":"mine"}}"#, jwt: token)
        #expect(clash.status == 400)
    }
}

/// The same over TCP: with a `jwt` block `/v1/uptoken` is an asynchronous route, for JWTs and
/// API keys alike.
@Suite("End-user tokens on a real port")
struct EndUserTokenLiveTests {
    @Test func aJWTAndAnAPIKeyBothGetTokensOverTCP() async throws {
        let fixture = try await JWTFixture.load()
        var jwt = try fixture.configuration()
        jwt.leewaySeconds = 300
        // The fixture's tokens are made for the harness's pinned time; over TCP the clock is real,
        // so this one is made for now by the HS256 path of PyJWT.
        let (status, output) = try await PythonSDK.run([
            "-c",
            "import jwt,time,sys; print(jwt.encode({'iss':sys.argv[1],'aud':sys.argv[2],'sub':'live-user',"
                + "'exp':int(time.time())+600}, sys.argv[3], algorithm='HS256'))",
            JWTFixture.issuer, JWTFixture.audience, fixture.hs256Secret,
        ])
        #expect(status == 0, "\(output)")
        let token = output.trimmingCharacters(in: .whitespacesAndNewlines)
        let live = try LiveServer(jwt: jwt)
        defer { Task { await live.stop() } }
        let user = try await live.request(
            "POST", "/v1/uptoken", headers: [("Authorization", "Bearer \(token)")], body: Array(#"{"fsize":3}"#.utf8))
        #expect(user.status == 200, "\(user.text)")
        #expect(user.text.contains(#""key":null"#))
        let client = try await live.request(
            "POST", "/v1/uptoken", headers: [("Authorization", "Bearer demo-api-key")], body: Array("{}".utf8))
        #expect(client.status == 200, "\(client.text)")
        let big = try await live.request(
            "POST", "/v1/uptoken", headers: [("Authorization", "Bearer \(token)")],
            body: Array("{\"fname\":\"\(String(repeating: "a", count: 17_000))\"}".utf8))
        #expect(big.status == 413)
    }
}
