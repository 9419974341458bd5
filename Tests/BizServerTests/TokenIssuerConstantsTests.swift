@testable import BizServer
import NativeCrypto
import Testing
import UpCore

/// The values signed into a token's callback body come in a fixed order: the client id, the
/// trace id, the request's `x:` variables as sent, then the client's configured ones by name.
@Suite("TokenIssuer constants")
struct TokenIssuerConstantsTests {
    static let issuer = TokenIssuer(accessKey: "ak", mac: HMACSHA1(key: Array("sk".utf8)), upHosts: [])

    static func client(_ type: BizServerConfiguration.CallbackBodyType) -> BizServerConfiguration.Client {
        BizServerConfiguration.Client(
            id: "c", apiKeySHA256: "", bucket: "b", keyPrefix: "c/", callbackBodyType: type,
            vars: ["x:b": "2", "x:a": "1", "x:c": "3"])
    }

    @Test func formBodyOrder() throws {
        var request = TokenRequest()
        request.vars = [("x:z", "9"), ("x:y", "8")]
        let issued = try Self.issuer.issue(
            for: Self.client(.form), request: request, now: 0, traceID: "trace-123", callbackURL: "http://h/v1/callback")
        let body = try #require(issued.policy.callbackBody)
        #expect(body.hasSuffix("&clientId=c&traceId=trace-123&x%3Az=9&x%3Ay=8&x%3Aa=1&x%3Ab=2&x%3Ac=3"), "\(body)")
    }

    @Test func jsonBodyOrder() throws {
        let issued = try Self.issuer.issue(
            for: Self.client(.json), request: TokenRequest(), now: 0, traceID: "trace-123", callbackURL: "http://h/v1/callback")
        let body = try #require(issued.policy.callbackBody)
        #expect(body.hasSuffix(#","clientId":"c","traceId":"trace-123","vars":{"x:a":"1","x:b":"2","x:c":"3"}}"#), "\(body)")
    }
}
