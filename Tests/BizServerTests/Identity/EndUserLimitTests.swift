import Basics
import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore

/// Per-user limits of the JWT client (`tokensPerMinutePerUser`, `maxBytesPerUserPerDay`):
/// 429 with `Retry-After`, one user never spending another's allowance.
@Suite("Per-user limits")
struct EndUserLimitTests {
    @Test func tokensPerMinutePerUserIsABucketRefilledOverAMinute() async throws {
        let (harness, fixture) = try await EndUserTokenTests.harness(perUser: .init(tokensPerMinute: 2))
        let alice = fixture.token("valid_rs256"), bob = fixture.token("valid_auth0_sub")
        #expect(await harness.endUserToken(jwt: alice).status == 200)
        #expect(await harness.endUserToken(jwt: alice).status == 200)
        let limited = await harness.endUserToken(jwt: alice)
        #expect(limited.status == 429)
        #expect(limited.errorText == "too many token requests for this user")
        #expect(limited.headers["Retry-After"] == "30")
        #expect(await harness.endUserToken(jwt: bob).status == 200, "another user has their own bucket")
        harness.clock.advance(by: 30)
        #expect(await harness.endUserToken(jwt: alice).status == 200)
        #expect(harness.server.metrics.value("upgate_biz_tokens_refused_total", ["user_rate_limited"]) == 1)
    }

    @Test func withoutItEachUserGetsTheServersRateOnTheirOwn() async throws {
        let (harness, fixture) = try await EndUserTokenTests.harness(rateLimit: .init(tokensPerSecond: 0.5, burst: 2))
        let alice = fixture.token("valid_rs256")
        #expect(await harness.endUserToken(jwt: alice).status == 200)
        #expect(await harness.endUserToken(jwt: fixture.token("valid_es256")).status == 200)
        let limited = await harness.endUserToken(jwt: alice)
        #expect(limited.status == 429 && limited.headers["Retry-After"] == "2")
        #expect(await harness.endUserToken(jwt: fixture.token("valid_auth0_sub")).status == 200)
        #expect(await harness.token("{}").status == 200, "the app's API key is not one of its users")
    }

    /// Records an upload of `fsize` bytes by `endUser`, as the up server's callback would.
    static func record(_ harness: BizServerHarness, endUser: String, fsize: Int, key: String) async {
        let body = Array("bucket=demo&key=\(key)&hash=H\(key)&fsize=\(fsize)&clientId=demo&endUser=\(endUser)".utf8)
        let response = await harness.postQBox(target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType)
        #expect(response.status == 200, "\(response.text)")
    }

    @Test func maxBytesPerUserPerDayBoundsTheTokenThenRefusesUntilOldUploadsAgeOut() async throws {
        let (harness, fixture) = try await EndUserTokenTests.harness(perUser: .init(maxBytesPerDay: 100))
        let alice = fixture.token("valid_rs256")
        await Self.record(harness, endUser: "user-42", fsize: 30, key: "a")
        harness.clock.advance(by: 3600)
        await Self.record(harness, endUser: "user-42", fsize: 50, key: "b")
        await Self.record(harness, endUser: "auth0|5f7c8ec7c33c6c004bbafe82", fsize: 99, key: "c")
        harness.clock.set(Double(JWTFixture.now))  // back to the time the JWTs are valid at

        let (_, left) = try await harness.issuedPolicy("{}", jwt: alice)
        #expect(left.fsizeLimit == 20, "what is left of the day bounds the token")
        let (_, declared) = try await harness.issuedPolicy(#"{"fsize":20}"#, jwt: alice)
        #expect(declared.fsizeLimit == 20)

        let over = await harness.endUserToken(#"{"fsize":21}"#, jwt: alice)
        #expect(over.status == 429)
        #expect(over.errorText == "daily upload volume for this user reached")
        #expect(over.headers["Retry-After"] == "86400", "when the 30 bytes recorded at this time leave the window")
        let never = await harness.endUserToken(#"{"fsize":101}"#, jwt: alice)
        #expect(never.status == 413)

        let (_, bob) = try await harness.issuedPolicy("{}", jwt: fixture.token("valid_auth0_sub"))
        #expect(bob.fsizeLimit == 1, "bob has spent 99 of his own 100")
        #expect(harness.server.metrics.value("upgate_biz_tokens_refused_total", ["user_quota_exhausted"]) == 1)
    }

    @Test func aUserWithNothingLeftWaitsForTheOldestUploadToLeaveTheWindow() async throws {
        let (harness, fixture) = try await EndUserTokenTests.harness(perUser: .init(maxBytesPerDay: 100))
        harness.clock.set(Double(JWTFixture.now - 86_000))
        await Self.record(harness, endUser: "user-42", fsize: 100, key: "full")
        harness.clock.set(Double(JWTFixture.now))
        let full = await harness.endUserToken(jwt: fixture.token("valid_rs256"))
        #expect(full.status == 429 && full.headers["Retry-After"] == "400")
        #expect(full.errorText == "daily upload volume for this user reached")
    }
}
