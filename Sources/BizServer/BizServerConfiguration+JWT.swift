import Foundation
import Basics
import ServerShell

/// Loading the `jwt` block and the per-user keys of `clients[]` entries (issue 11 §1):
///
/// | key | meaning |
/// |---|---|
/// | `jwt.jwksFile` | a JWKS file, read at load (relative to the working directory) |
/// | `jwt.jwksURL` | a JWKS URL (`https://`, or `http://` on loopback), fetched on first need |
/// | `jwt.hs256Secret` | HS256 shared secret, ≥ 32 bytes; `UPGATE_JWT_HS256_SECRET` overrides it |
/// | `jwt.issuer`, `jwt.audience` | required: the `iss` and an `aud` every token must carry |
/// | `jwt.client` | required: the `clients[]` entry whose settings the tokens get |
/// | `jwt.keyPrefix` | `"users/{sub}/"`: must contain `{sub}/` once |
/// | `jwt.leewaySeconds` | `60`, 0…300 |
/// | `clients[].tokensPerMinutePerUser` | none; only on the `jwt.client` entry |
/// | `clients[].maxBytesPerUserPerDay` | none; only on the `jwt.client` entry |
///
/// At most one of `jwksFile` and `jwksURL`. The block is read by the shell's strict reader like
/// the rest of the file: an unknown or repeated key, a value of the wrong type or `null` for a
/// required key is one line naming `jwt.<key>` (a misspelt key would silently weaken the block).
extension BizServerConfiguration {
    /// The per-user limits of one `clients[]` entry (absent keys: no limit).
    static func perUserLimits(_ entry: ConfigurationObject) throws(ConfigurationError) -> JWTConfiguration.PerUserLimits {
        func positive(_ key: String) throws(ConfigurationError) -> Int64? {
            guard let number = try entry.integer(key, as: Int64.self) else { return nil }
            guard number >= 1 else { throw entry.invalid(key, "must be a positive integer, got \(number)") }
            return number
        }
        var limits = JWTConfiguration.PerUserLimits()
        limits.tokensPerMinute = try positive("tokensPerMinutePerUser").map { Int(clamping: $0) }
        limits.maxBytesPerDay = try positive("maxBytesPerUserPerDay")
        return limits
    }

    /// Sets ``jwt`` from the file's `jwt` block (nil: no block), the per-user limits read from
    /// its clients (by client id), and `environment`; `readFile` reads `jwksFile`.
    mutating func readJWT(
        _ block: ConfigurationObject?, perUser: [(client: String, limits: JWTConfiguration.PerUserLimits)],
        environment: [String: String],
        readFile: (String) -> Data? = { FileManager.default.contents(atPath: $0) }
    ) throws(ConfigurationError) {
        let secretFromEnvironment = environment["UPGATE_JWT_HS256_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        let limited = perUser.filter { $0.limits != JWTConfiguration.PerUserLimits() }
        guard let block else {
            if secretFromEnvironment != nil {
                throw ConfigurationError("UPGATE_JWT_HS256_SECRET is set, but the configuration has no jwt block")
            }
            if let (client, _) = limited.first {
                throw ConfigurationError(
                    "client '\(client)': tokensPerMinutePerUser and maxBytesPerUserPerDay limit JWT users; add a jwt block naming it")
            }
            return
        }
        let keys: JWTConfiguration.KeySource
        switch (try block.string("jwksFile"), try block.string("jwksURL")) {
        case (let path?, nil):
            guard let data = readFile(path) else {
                throw ConfigurationError("jwt.jwksFile: cannot read \(path) (paths are relative to the working directory)")
            }
            do {
                keys = .file(path: path, try JWTConfiguration.JWKS(json: Array(data)))
            } catch {
                throw ConfigurationError("jwt.jwksFile \(path): \(error.description)")
            }
        case (nil, let url?): keys = .url(url)
        case (nil, nil): keys = .none
        case (_?, _?): throw ConfigurationError("jwt: give jwksFile or jwksURL, not both")
        }
        guard let issuer = try block.string("issuer") else { throw ConfigurationError("jwt.issuer is required (the tokens' iss)") }
        guard let audience = try block.string("audience") else {
            throw ConfigurationError("jwt.audience is required (an aud of the tokens)")
        }
        guard let client = try block.string("client") else { throw ConfigurationError("jwt.client is required (a clients[] id)") }
        for (other, _) in limited where other != client {
            throw ConfigurationError(
                "client '\(other)': tokensPerMinutePerUser and maxBytesPerUserPerDay limit JWT users, but jwt.client is '\(client)'")
        }
        let secretFromFile = try block.string("hs256Secret")
        jwt = JWTConfiguration(
            keys: keys, hs256Secret: secretFromEnvironment ?? secretFromFile, issuer: issuer,
            audience: audience, client: client, keyPrefix: try block.string("keyPrefix") ?? "users/{sub}/",
            leewaySeconds: try block.integer("leewaySeconds", as: Int64.self, in: 0...300) ?? 60,
            perUser: limited.first { $0.client == client }?.limits ?? .init())
    }
}
