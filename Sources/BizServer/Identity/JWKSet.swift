import NativeCrypto
import UpCore

/// A JSON Web Key Set (RFC 7517 §5) turned into ``VerificationKey``s.
///
/// Each key's algorithm comes from the key alone: its `alg` if present (and consistent with its
/// type), else `kty`/`crv` (RSA → RS256, EC P-256 → ES256, OKP Ed25519 → EdDSA). Keys that are
/// not for verifying signatures (`use` other than `sig`, `key_ops` without `verify`) are left
/// out silently, as an identity provider's set may also hold encryption keys; keys we cannot use
/// (other algorithms or curves, RSA under 2048 bits, secret `oct` keys, anything holding private
/// parts) are left out with a note, which the loader decides about: a `jwksFile` with a note is a
/// configuration error, a fetched set logs it. Unknown members are ignored (RFC 7517 §4, §5);
/// duplicate member names and duplicate `kid`s make the whole set invalid.
struct JWKSet: Sendable {
    /// The usable keys, in document order.
    let keys: [VerificationKey]
    /// One line per key left out for a reason worth telling (`key 2 (kid "x"): …`).
    let notes: [String]

    /// Why a document is not a key set at all.
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used".
    static let minimumRSABits = 2048

    static func parse(_ bytes: [UInt8]) throws(Invalid) -> JWKSet {
        let document: JSONObject
        switch JSONObject.parse(bytes) {
        case .success(let object): document = object
        case .failure(.duplicate(let name)): throw Invalid(description: "member '\(name)' appears twice")
        case .failure(.notAnObject), nil: throw Invalid(description: "not a JSON object")
        }
        guard case .array(let entries)? = document["keys"] else { throw Invalid(description: "no \"keys\" array") }
        var keys: [VerificationKey] = []
        var notes: [String] = []
        var keyIDs = Set<String>()
        for (index, entry) in entries.enumerated() {
            let jwk: JSONObject
            do {
                jwk = try JSONObject(entry)
            } catch .duplicate(let name) {
                throw Invalid(description: "key \(index + 1): member '\(name)' appears twice")
            } catch {
                throw Invalid(description: "key \(index + 1) is not an object")
            }
            let kid = jwk["kid"]?.stringValue
            let label = "key \(index + 1)" + (kid.map { " (kid \"\($0)\")" } ?? "")
            do {
                guard let key = try Self.key(jwk, keyID: kid) else { continue }
                if let kid, !keyIDs.insert(kid).inserted { throw Invalid(description: "kid \"\(kid)\" appears twice") }
                keys.append(key)
            } catch let skipped as Skipped {
                notes.append("\(label): \(skipped.reason)")
            } catch let invalid as Invalid {
                throw invalid
            } catch {
                notes.append("\(label): \(error)")
            }
        }
        return JWKSet(keys: keys, notes: notes)
    }

    /// A key left out, and why.
    private struct Skipped: Error {
        let reason: String
    }

    /// The key `jwk` describes, nil when it is not a signature-verification key at all.
    private static func key(_ jwk: JSONObject, keyID: String?) throws -> VerificationKey? {
        if let use = jwk["use"], use.stringValue != "sig" { return nil }
        if case .array(let operations)? = jwk["key_ops"], !operations.contains(.string("verify")) { return nil }
        if jwk["kid"] != nil, keyID == nil { throw Skipped(reason: "kid must be a string") }
        guard let kty = jwk["kty"]?.stringValue else { throw Skipped(reason: "no kty") }
        for part in ["d", "p", "q", "dp", "dq", "qi", "k"] where jwk[part] != nil {
            throw Skipped(reason: "holds secret key material (\"\(part)\"): publish only public keys")
        }
        let declared = try jwk["alg"].map { value throws in
            guard let name = value.stringValue, let algorithm = JWTAlgorithm(rawValue: name), algorithm != .hs256 else {
                throw Skipped(reason: "alg \(value.stringValue.map { "\"\($0)\"" } ?? "?") is not supported (RS256, ES256, EdDSA)")
            }
            return algorithm
        }
        let (algorithm, publicKey): (JWTAlgorithm, PublicKey)
        switch (kty, jwk["crv"]?.stringValue) {
        case ("RSA", _):
            let key = try PublicKey.rsa(modulus: try bytes(jwk, "n"), exponent: try bytes(jwk, "e"))
            guard key.bits >= minimumRSABits else { throw Skipped(reason: "RSA key of \(key.bits) bits, under 2048") }
            (algorithm, publicKey) = (.rs256, key)
        case ("EC", "P-256"):
            (algorithm, publicKey) = (.es256, try PublicKey.p256(x: try bytes(jwk, "x"), y: try bytes(jwk, "y")))
        case ("OKP", "Ed25519"):
            (algorithm, publicKey) = (.edDSA, try PublicKey.ed25519(try bytes(jwk, "x")))
        case ("EC", let curve), ("OKP", let curve):
            throw Skipped(reason: "curve \(curve.map { "\"\($0)\"" } ?? "(none)") is not supported (P-256, Ed25519)")
        default:
            throw Skipped(reason: "kty \"\(kty)\" is not supported (RSA, EC, OKP)")
        }
        if let declared, declared != algorithm {
            throw Skipped(reason: "alg \(declared.rawValue) does not fit a \(kty) key")
        }
        return VerificationKey(keyID: keyID, algorithm: algorithm, publicKey: publicKey)
    }

    private static func bytes(_ jwk: JSONObject, _ name: String) throws(Skipped) -> [UInt8] {
        guard let text = jwk[name]?.stringValue, let bytes = URLSafeBase64.decode(text) else {
            throw Skipped(reason: "\"\(name)\" is not base64url")
        }
        return bytes
    }
}
