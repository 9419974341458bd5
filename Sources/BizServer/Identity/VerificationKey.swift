import NativeCrypto
import UpCore

/// One key a JWT may be signed with, and the one algorithm it verifies.
struct VerificationKey: Sendable {
    /// The JWK `kid`, if it has one; the HS256 secret has none.
    let keyID: String?
    /// Fixed when the key was loaded, never taken from a token.
    let algorithm: JWTAlgorithm
    private let material: Material

    private enum Material: Sendable {
        case publicKey(PublicKey)
        case secret(HMAC)
    }

    /// A public key; `algorithm` must be the one its kind verifies (`JWKSet` makes sure).
    init(keyID: String?, algorithm: JWTAlgorithm, publicKey: PublicKey) {
        self.keyID = keyID
        self.algorithm = algorithm
        material = .publicKey(publicKey)
    }

    /// The HS256 key: the UTF-8 bytes of `secret`, as PyJWT, jose and Supabase use a text secret.
    init(hs256Secret secret: String) {
        keyID = nil
        algorithm = .hs256
        material = .secret(HMAC(.sha256, key: Array(secret.utf8)))
    }

    /// Whether `signature` signs `input` under this key.
    func verifies(_ signature: [UInt8], of input: [UInt8]) -> Bool {
        switch material {
        case .publicKey(let key):
            return key.isValidSignature(signature, for: input)
        case .secret(let mac):
            // The expected MAC's length is public; its bytes are compared in constant time.
            return ConstantTime.equals(mac.authenticationCode(for: input), signature)
        }
    }
}
