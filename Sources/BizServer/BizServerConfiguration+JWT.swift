public import Foundation
public import Basics
import UpCore

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
/// At most one of `jwksFile` and `jwksURL`; a `null` value is the same as an absent key; unknown
/// keys in the block are refused (`_comment` aside), as misspelt ones would silently weaken it.
extension BizServerConfiguration {
    /// The `jwt` block's keys.
    static let jwtKeys = ["jwksFile", "jwksURL", "hs256Secret", "issuer", "audience", "client", "keyPrefix", "leewaySeconds"]
    /// The per-user keys of a client entry.
    static let perUserClientKeys = ["tokensPerMinutePerUser", "maxBytesPerUserPerDay"]

    /// Sets ``jwt`` from the configuration `json` and `environment`; `readFile` reads `jwksFile`.
    public mutating func loadJWT(
        json: Data, environment: [String: String],
        readFile: (String) -> Data? = { FileManager.default.contents(atPath: $0) }
    ) throws(ConfigurationError) {
        guard let document = try? JSONValue.parse(Array(json)) else {
            throw ConfigurationError("invalid configuration JSON")
        }
        let secretFromEnvironment = environment["UPGATE_JWT_HS256_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        let perUser = try Self.perUserLimits(document["clients"])
        guard let block = document["jwt"], block != .null else {
            if secretFromEnvironment != nil {
                throw ConfigurationError("UPGATE_JWT_HS256_SECRET is set, but the configuration has no jwt block")
            }
            if let (client, _) = perUser.first {
                throw ConfigurationError(
                    "client '\(client)': tokensPerMinutePerUser and maxBytesPerUserPerDay limit JWT users; add a jwt block naming it")
            }
            return
        }
        let object: JSONObject
        do {
            object = try JSONObject(block)
        } catch .duplicate(let name) {
            throw ConfigurationError("jwt.\(name) is given twice")
        } catch {
            throw ConfigurationError("jwt must be an object")
        }
        for name in object.members.keys where !Self.jwtKeys.contains(name) && name != "_comment" {
            throw ConfigurationError("unknown key \"\(name)\" in jwt" + Self.suggestion(for: name, among: Self.jwtKeys))
        }
        func text(_ name: String) throws(ConfigurationError) -> String? {
            guard let value = object[name] else { return nil }
            guard let text = value.stringValue else { throw ConfigurationError("jwt.\(name) must be a string") }
            return text
        }
        let keys: JWTConfiguration.KeySource
        switch (try text("jwksFile"), try text("jwksURL")) {
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
        guard let issuer = try text("issuer") else { throw ConfigurationError("jwt.issuer is required (the tokens' iss)") }
        guard let audience = try text("audience") else { throw ConfigurationError("jwt.audience is required (an aud of the tokens)") }
        guard let client = try text("client") else { throw ConfigurationError("jwt.client is required (a clients[] id)") }
        for (other, _) in perUser where other != client {
            throw ConfigurationError(
                "client '\(other)': tokensPerMinutePerUser and maxBytesPerUserPerDay limit JWT users, but jwt.client is '\(client)'")
        }
        var leeway: Int64 = 60
        if let value = object["leewaySeconds"] {
            guard case .int(let seconds) = value else { throw ConfigurationError("jwt.leewaySeconds must be an integer 0…300") }
            leeway = seconds
        }
        let secretFromFile = try text("hs256Secret")
        let keyPrefix = try text("keyPrefix") ?? "users/{sub}/"
        jwt = JWTConfiguration(
            keys: keys, hs256Secret: secretFromEnvironment ?? secretFromFile, issuer: issuer, audience: audience,
            client: client, keyPrefix: keyPrefix, leewaySeconds: leeway,
            perUser: perUser.first { $0.client == client }?.limits ?? .init())
    }

    /// The per-user limits set on `clients[]` entries, by client id.
    private static func perUserLimits(
        _ clients: JSONValue?
    ) throws(ConfigurationError) -> [(client: String, limits: JWTConfiguration.PerUserLimits)] {
        guard case .array(let entries)? = clients else { return [] }
        var found: [(client: String, limits: JWTConfiguration.PerUserLimits)] = []
        for entry in entries {
            guard let id = entry["id"]?.stringValue else { continue }  // the main reader reports it
            var limits = JWTConfiguration.PerUserLimits()
            func count(_ name: String) throws(ConfigurationError) -> Int64? {
                guard let value = entry[name], value != .null else { return nil }
                guard case .int(let number) = value, number >= 1 else {
                    throw ConfigurationError("client '\(id)': \(name) must be a positive integer")
                }
                return number
            }
            limits.tokensPerMinute = try count("tokensPerMinutePerUser").map { Int(clamping: $0) }
            limits.maxBytesPerDay = try count("maxBytesPerUserPerDay")
            if limits != JWTConfiguration.PerUserLimits() { found.append((id, limits)) }
        }
        return found
    }

    /// ` (did you mean "x"?)` for a key within two edits (or a case change) of a known one.
    static func suggestion(for name: String, among known: [String]) -> String {
        let scored = known.map { ($0, editDistance(Array(name.lowercased()), Array($0.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return "" }
        return " (did you mean \"\(best.0)\"?)"
    }

    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
