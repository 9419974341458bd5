import BizServer
import Foundation
import TestSupport

/// Keys and end-user JWTs made by PyJWT and cryptography (`Tests/Conformance/jwt_tokens.py`),
/// generated once per test run: nothing here is signed by biz-server's code.
struct JWTFixture: Sendable {
    /// The time the tokens are made for: the harness's clock.
    static let now = 1_900_000_000
    static let issuer = "https://auth.test/"
    static let audience = "upgate"

    /// The JWKS biz-server trusts: `rsa-1` (RS256), `ec-1` (ES256), `ed-1` (EdDSA).
    let jwks: [UInt8]
    /// The set after the provider rotated to `rsa-2`.
    let jwksRotated: [UInt8]
    let hs256Secret: String
    let tokens: [String: String]

    private static let generated = Task { try await generate() }

    /// The fixture (generated on first use).
    static func load() async throws -> JWTFixture { try await generated.value }

    /// The token called `name` in the script.
    func token(_ name: String) -> String {
        guard let token = tokens[name] else { preconditionFailure("jwt_tokens.py makes no token '\(name)'") }
        return token
    }

    /// A `jwt` block trusting the fixture's JWKS (or `keys`) and HS256 secret, for client `demo`.
    func configuration(
        keys: JWTConfiguration.KeySource? = nil, perUser: JWTConfiguration.PerUserLimits = .init()
    ) throws -> JWTConfiguration {
        JWTConfiguration(
            keys: try keys ?? .file(path: "fixture-jwks.json", JWTConfiguration.JWKS(json: jwks)),
            hs256Secret: hs256Secret, issuer: Self.issuer, audience: Self.audience, client: "demo",
            keyPrefix: "users/{sub}/", leewaySeconds: 60, perUser: perUser)
    }

    private static func generate() async throws -> JWTFixture {
        let script = PythonSDK.repositoryRoot.appending(path: "Tests/Conformance/jwt_tokens.py").path
        let (status, output) = try await PythonSDK.run([
            script, "--now", String(now), "--issuer", issuer, "--audience", audience,
        ])
        guard status == 0, let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] else {
            throw PythonFailure(output: output)
        }
        func bytes(_ name: String) throws -> [UInt8] {
            Array(try JSONSerialization.data(withJSONObject: object[name] as Any))
        }
        return JWTFixture(
            jwks: try bytes("jwks"), jwksRotated: try bytes("jwksRotated"),
            hs256Secret: object["hs256Secret"] as? String ?? "", tokens: object["tokens"] as? [String: String] ?? [:])
    }

    struct PythonFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "jwt_tokens.py failed (run scripts/pyenv):\n\(output)" }
    }
}
