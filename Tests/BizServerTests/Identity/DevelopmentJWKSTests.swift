import BizServer
import Foundation
import TestSupport
import Testing
import UpCore

/// `Config/dev-jwks.json` and its published private key `Config/dev-jwt-private.pem` belong
/// together: PyJWT signs with the one, biz-server verifies with the other.
@Suite("Development JWKS")
struct DevelopmentJWKSTests {
    @Test func thePublishedDevelopmentKeySignsTokensTheDevelopmentJWKSAccepts() async throws {
        let root = PythonSDK.repositoryRoot
        let jwks = try JWTConfiguration.JWKS(json: Array(try Data(contentsOf: root.appending(path: "Config/dev-jwks.json"))))
        let (status, output) = try await PythonSDK.run([
            "-c",
            "import jwt,sys; print(jwt.encode({'iss':'https://auth.example.com/','aud':'upgate','sub':'dev-user',"
                + "'exp':\(JWTFixture.now + 600)}, open(sys.argv[1]).read(), algorithm='RS256', headers={'kid':'dev-rs256-1'}))",
            root.appending(path: "Config/dev-jwt-private.pem").path,
        ])
        #expect(status == 0, "\(output)")
        let harness = BizServerHarness(jwt: JWTConfiguration(
            keys: .file(path: "Config/dev-jwks.json", jwks), issuer: "https://auth.example.com/", audience: "upgate",
            client: "demo"))
        let (_, policy) = try await harness.issuedPolicy("{}", jwt: output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(policy.endUser == "dev-user" && policy.scope == "demo:users/dev-user/")
    }
}
