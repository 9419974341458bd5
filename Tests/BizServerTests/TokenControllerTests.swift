import Basics
import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore

@Suite("POST /v1/uptoken")
struct TokenControllerTests {
    @Test func issuesATokenScopedToTheKeyWithTheCallbackAndLimits() async throws {
        let harness = BizServerHarness()
        let (response, policy) = try await harness.issuedPolicy(
            #"{"key":"demo/a.txt","fname":"a.txt","fsize":5,"vars":{"x:color":"red"}}"#)
        #expect(response["bucket"] as? String == "demo")
        #expect(response["key"] as? String == "demo/a.txt")
        #expect(response["expiresAt"] as? Int == 1_900_003_600)
        #expect(response["upHosts"] as? [String] == ["http://127.0.0.1:9000"])
        let traceID = try #require(response["traceId"] as? String)
        #expect(traceID.count == 16)

        #expect(policy.scope == "demo:demo/a.txt")
        #expect(policy.deadline == 1_900_003_600)
        #expect(policy.endUser == "demo")
        #expect(policy.fsizeMin == 1 && policy.fsizeLimit == 5, "the declared fsize bounds the token")
        #expect(policy.saveKey == nil && !policy.isPrefixal)
        #expect(policy.callbackUrl == "http://127.0.0.1:8080/v1/callback")
        #expect(policy.callbackBodyType == "application/x-www-form-urlencoded")
        let body = try #require(policy.callbackBody)
        for field in ["bucket=$(bucket)", "key=$(key)", "hash=$(etag)", "fsize=$(fsize)", "mimeType=$(mimeType)",
                      "fname=$(fname)", "endUser=$(endUser)", "clientId=demo", "traceId=\(traceID)",
                      "x%3Acolor=red", "x%3Aapp=upgate-test"] {
            #expect(body.contains(field), "callbackBody lacks \(field): \(body)")
        }
    }

    @Test func withoutAKeyTheObjectIsNamedBySaveKeyUnderThePrefix() async throws {
        let harness = BizServerHarness()
        let (response, policy) = try await harness.issuedPolicy("{}")
        #expect(response["key"] is NSNull)
        #expect(policy.scope == "demo:demo/")
        #expect(policy.isPrefixal)
        #expect(policy.saveKey == "demo/$(etag)$(ext)")
        #expect(policy.forceSaveKey == true)
    }

    // Issue 10 item 6: a declared size used to leave the client's 1 GiB limit in the token.
    @Test func aDeclaredSizeBecomesTheTokensLimitAndExactSizeItsMinimumToo() async throws {
        let harness = BizServerHarness()
        let declared = try await harness.issuedPolicy(#"{"key":"demo/a","fsize":5}"#).policy
        #expect(declared.fsizeLimit == 5)
        #expect(declared.fsizeMin == 1, "without exactSize the client's minimum stays")
        let exact = try await harness.issuedPolicy(#"{"key":"demo/a","fsize":5,"exactSize":true}"#).policy
        #expect(exact.fsizeMin == 5 && exact.fsizeLimit == 5)
        let notExact = try await harness.issuedPolicy(#"{"key":"demo/a","fsize":7,"exactSize":false}"#).policy
        #expect(notExact.fsizeMin == 1 && notExact.fsizeLimit == 7)
        let undeclared = try await harness.issuedPolicy(#"{"key":"demo/a"}"#).policy
        #expect(undeclared.fsizeMin == 1 && undeclared.fsizeLimit == 1 << 30)
    }

    @Test func anEmptyBodyIsAnEmptyRequest() async throws {
        let harness = BizServerHarness()
        let response = await harness.send(.post, "/v1/uptoken", headers: ["Authorization": "Bearer demo-api-key"])
        #expect(response.status == 200)
    }

    @Test func askingAgainForTheSameKeyGivesAFreshTokenAndKeepsAGivenTraceID() async throws {
        let harness = BizServerHarness()
        let first = try await harness.issuedPolicy(#"{"key":"demo/big.bin","traceId":"trace-0123456789"}"#)
        harness.clock.advance(by: 1800)
        let second = try await harness.issuedPolicy(#"{"key":"demo/big.bin","traceId":"trace-0123456789"}"#)
        #expect(second.policy.deadline == first.policy.deadline + 1800)
        #expect(second.response["uptoken"] as? String != first.response["uptoken"] as? String)
        #expect(second.response["traceId"] as? String == "trace-0123456789")
    }

    @Test func jsonClientsGetABodySha1BoundCallbackURLAndAnEscapedJSONTemplate() async throws {
        let harness = BizServerHarness { $0.callbackBodyType = .json }
        let (_, policy) = try await harness.issuedPolicy(#"{"key":"demo/x","vars":{"x:evil":"$(key)\"}"}}"#)
        #expect(policy.callbackUrl == "http://127.0.0.1:8080/v1/callback?bodySha1=$(bodySha1)")
        #expect(policy.callbackBodyType == "application/json")
        let template = try #require(policy.callbackBody)
        #expect(template.contains(#""x:evil":"\u0024(key)\"}""#), "\(template)")
        // Rendering with any values yields valid JSON whose constant survived verbatim.
        let rendered = MagicVariables(bucket: "demo", key: "demo/x", etag: "E", fsize: 3, mimeType: "a/b")
            .renderJSON(template)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(rendered.utf8)) as? [String: Any])
        #expect((object["vars"] as? [String: String])?["x:evil"] == "$(key)\"}")
        #expect(object["fsize"] as? Int == 3)
    }

    @Test(
        "Refusals carry the documented status and error",
        arguments: [
            (#"{"key":"other/a.txt"}"#, 403, "key doesn't match the allowed prefix", "key_outside_prefix"),
            (#"{"key":"demo/a","fsize":0}"#, 403, "fsize below the allowed minimum", "fsize_too_small"),
            (#"{"key":"demo/a","fsize":1073741825}"#, 413, "fsize above the allowed limit", "fsize_too_large"),
            (#"{"key":"demo/a","mimeType":"application/x-sh"}"#, 403, "limited mimeType", "limited_mime_type"),
            (#"{"key":"demo/a""#, 400, "body is not valid JSON", "invalid_request"),
            (#"["demo/a"]"#, 400, "body must be a JSON object", "invalid_request"),
            (#"{"key":42}"#, 400, "key must be a string", "invalid_request"),
            (#"{"key":""}"#, 400, "key must be 1…750 bytes of UTF-8 without NUL", "invalid_request"),
            (#"{"key":"a\u0000b"}"#, 400, "key must not contain NUL", "invalid_request"),
            (#"{"fname":"a\u0000"}"#, 400, "fname must not contain NUL", "invalid_request"),
            (#"{"fsize":-1}"#, 400, "fsize must be a non-negative integer", "invalid_request"),
            (#"{"fsize":"5"}"#, 400, "fsize must be a non-negative integer", "invalid_request"),
            (#"{"filesize":5}"#, 400, "unknown member 'filesize'", "invalid_request"),
            (#"{"key":"demo/a","key":"other/b"}"#, 400, "duplicate member 'key'", "invalid_request"),
            (#"{"fsize":5,"vars":{},"fsize":9}"#, 400, "duplicate member 'fsize'", "invalid_request"),
            (#"{"vars":{"color":"red"}}"#, 400, "var names must look like x:name (x: then 1…64 of [A-Za-z0-9_-])", "invalid_request"),
            (#"{"vars":{"x:a":1}}"#, 400, "var 'x:a' must be a string without NUL", "invalid_request"),
            (#"{"traceId":"short"}"#, 400, "traceId must be 8…64 of [A-Za-z0-9_-]", "invalid_request"),
            (#"{"exactSize":true}"#, 400, "exactSize needs fsize", "invalid_request"),
            (#"{"fsize":5,"exactSize":"yes"}"#, 400, "exactSize must be true or false", "invalid_request"),
            (#"{"vars":{"x:app":"mine"}}"#, 400, "var 'x:app' is set by the server for this client", "invalid_request"),
        ])
    func refuses(body: String, status: Int, error: String, reason: String) async throws {
        let harness = BizServerHarness { $0.mimeLimit = "image/*;text/plain" }
        let response = await harness.token(body)
        #expect(response.status == status, "\(response.text)")
        #expect(response.errorText == error)
        #expect(harness.server.metrics.value("upgate_biz_tokens_refused_total", [reason]) == 1)
    }

    @Test func aKeyOfMoreThan750BytesIsRefused() async throws {
        let harness = BizServerHarness()
        let response = await harness.token("{\"key\":\"demo/\(String(repeating: "k", count: 746))\"}")
        #expect(response.status == 400)
        let fits = await harness.token("{\"key\":\"demo/\(String(repeating: "k", count: 745))\"}")
        #expect(fits.status == 200)
    }

    @Test func bodiesOverSixteenKiBAre413() async throws {
        let harness = BizServerHarness()
        let response = await harness.token("{\"fname\":\"\(String(repeating: "a", count: 17_000))\"}")
        #expect(response.status == 413)
    }

    @Test(
        "API key authentication",
        arguments: [
            (nil as String?, "missing API key"), ("Basic abc", "missing API key"), ("Bearer ", "missing API key"),
            ("Bearer wrong-key", "bad API key"), ("Bearer demo-api-key-", "bad API key"),
            ("Bearerdemo-api-key", "missing API key"), ("Bearer\tdemo-api-key", "missing API key"),
            ("Bearers demo-api-key", "missing API key"), ("Bear demo-api-key", "missing API key"),
            ("Bearer demo-api-key\u{301}", "bad API key"),
        ])
    func unauthenticatedRequestsAre401(authorization: String?, error: String) async {
        let harness = BizServerHarness()
        var headers: HTTPHeaders = [:]
        if let authorization { headers.add(name: "Authorization", value: authorization) }
        let response = await harness.send(.post, "/v1/uptoken", headers: headers, body: Array("{}".utf8))
        #expect(response.status == 401)
        #expect(response.errorText == error)
    }

    @Test func theBearerSchemeIsCaseInsensitive() async {
        let harness = BizServerHarness()
        let response = await harness.send(.post, "/v1/uptoken", headers: ["Authorization": "bearer demo-api-key"])
        #expect(response.status == 200)
        // Spaces around the scheme and the key are not part of either.
        let spaced = await harness.send(.post, "/v1/uptoken", headers: ["Authorization": "  BEARER   demo-api-key  "])
        #expect(spaced.status == 200)
    }

    @Test func rateLimitAnswers429WithRetryAfterPerClient() async throws {
        let harness = BizServerHarness(rateLimit: .init(tokensPerSecond: 0.5, burst: 2))
        #expect(await harness.token("{}").status == 200)
        #expect(await harness.token("{}").status == 200)
        let limited = await harness.token("{}")
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "2")
        #expect(limited.errorText == "too many token requests")
        // Another client has its own bucket.
        #expect(await harness.token("{}", apiKey: BizServerHarness.otherKey).status == 200)
        harness.clock.advance(by: 2)
        #expect(await harness.token("{}").status == 200)
        #expect(harness.server.metrics.value("upgate_biz_tokens_refused_total", ["rate_limited"]) == 1)
        #expect(harness.server.metrics.value("upgate_biz_tokens_issued_total", ["demo"]) == 3)
    }

    @Test func noSecretOrAPIKeyReachesTheLog() async throws {
        let harness = BizServerHarness()
        _ = try await harness.issuedPolicy(#"{"key":"demo/a"}"#)
        _ = await harness.token("{}", apiKey: "wrong-secret-key-value")
        let log = harness.logs.capturedLines.joined()
        #expect(log.contains("token issued"))
        for secret in [BizServerHarness.secretKey, BizServerHarness.demoKey, "wrong-secret-key-value"] {
            #expect(!log.contains(secret), "log leaks \(secret)")
        }
    }
}
