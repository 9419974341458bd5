public import NativeCrypto

/// A verified upload token: `AK ":" B64(HMAC(SK, encodedPolicy)) ":" encodedPolicy`
/// (qiniu-protocol.md §1.1).
public struct UpToken: Sendable {
    /// The AccessKey that signed the token.
    public let accessKey: String
    /// The policy part exactly as received (the signed text).
    public let encodedPolicy: String
    /// The decoded policy.
    public let policy: PutPolicy

    /// Signs a policy: serializes it with ``PutPolicy/serialized()``, base64s it, and HMACs the
    /// base64 text (§1.1: the HMAC covers the *encoded* string).
    ///
    /// - Parameters:
    ///   - policy: The policy to grant.
    ///   - accessKey: The AccessKey put in front of the token.
    ///   - mac: HMAC-SHA1 prepared with the matching SecretKey.
    /// - Returns: The token text.
    public static func sign(_ policy: PutPolicy, accessKey: String, mac: HMACSHA1) -> String {
        var token: [UInt8] = []
        sign(policy, accessKey: accessKey, mac: mac, appendingTo: &token)
        return String(decoding: token, as: UTF8.self)
    }

    /// ``sign(_:accessKey:mac:)`` appending the token text to `output`.
    public static func sign(_ policy: PutPolicy, accessKey: String, mac: HMACSHA1, appendingTo output: inout [UInt8]) {
        sign(policyJSON: policy.serializedBytes(), accessKey: accessKey, mac: mac, appendingTo: &output)
    }

    /// Signs policy JSON text as is (reproduces an SDK's token byte for byte given its JSON).
    ///
    /// - Parameters:
    ///   - policyJSON: The exact JSON text to encode.
    ///   - accessKey: The AccessKey put in front of the token.
    ///   - mac: HMAC-SHA1 prepared with the matching SecretKey.
    /// - Returns: The token text.
    public static func sign(policyJSON: String, accessKey: String, mac: HMACSHA1) -> String {
        var token: [UInt8] = []
        sign(policyJSON: Array(policyJSON.utf8), accessKey: accessKey, mac: mac, appendingTo: &token)
        return String(decoding: token, as: UTF8.self)
    }

    /// Signs policy JSON bytes and appends the token text to `output`, with no intermediate text:
    /// the encoded policy is written in place, the HMAC is taken over those very bytes, and its
    /// base64 fills the slot left for it (a token response is built in one buffer this way).
    ///
    /// - Parameters:
    ///   - policyJSON: The exact JSON text to encode, as UTF-8.
    ///   - accessKey: The AccessKey put in front of the token.
    ///   - mac: HMAC-SHA1 prepared with the matching SecretKey.
    ///   - output: Bytes to append the token to.
    public static func sign(policyJSON: [UInt8], accessKey: String, mac: HMACSHA1, appendingTo output: inout [UInt8]) {
        let signatureCount = URLSafeBase64.encodedCount(HMACSHA1.byteCount)
        output.reserveCapacity(
            output.count + accessKey.utf8.count + signatureCount + 2 + URLSafeBase64.encodedCount(policyJSON.count))
        output.append(contentsOf: accessKey.utf8)
        output.append(UInt8(ascii: ":"))
        let signatureStart = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "="), count: signatureCount + 1))
        output[signatureStart + signatureCount] = UInt8(ascii: ":")
        let policyStart = output.count
        URLSafeBase64.append(policyJSON, to: &output)
        let code = mac.authenticationCode(for: output[policyStart...])
        URLSafeBase64.write(code, range: 0..<code.count, into: &output, at: signatureStart)
    }

    /// Parses and authenticates an upload token, in the order of §1.2.
    ///
    /// Exactly 3 fields; the AccessKey must be in `keys`; the HMAC is recomputed over
    /// `encodedPolicy` exactly as received (never re-serialized) and compared in constant time
    /// before anything is decoded, so nothing unsigned is ever parsed; then the policy must be
    /// base64 of a JSON object with `scope` and `deadline`; then `now > deadline` is expired
    /// (`now == deadline` is still valid). Pure: `now` is passed in.
    ///
    /// - Parameters:
    ///   - token: The token text (without the `UpToken ` prefix).
    ///   - keys: The key ring.
    ///   - now: Current Unix time in seconds.
    /// - Returns: The verified token.
    /// - Throws: ``UpError`` `.badToken` (shape, base64, JSON), `.unknownAccessKey`,
    ///   `.badSignature`, `.expiredToken` — all 401.
    public static func verify(_ token: String, keys: KeyRing, now: Int64) throws(UpError) -> UpToken {
        let fields = Array(token.utf8).split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard fields.count == 3 else {
            throw UpError(.badToken, detail: "expected 3 fields, got \(fields.count)")
        }
        let accessKey = String(decoding: fields[0], as: UTF8.self)
        guard let mac = keys.mac(for: accessKey) else {
            throw UpError(.unknownAccessKey, detail: "access key \(accessKey)")
        }
        let encodedPolicy = Array(fields[2])
        // Decoding the received signature (rather than comparing base64 text) also accepts an
        // unpadded signature, as §1 asks of our decoders.
        guard let signature = URLSafeBase64.decode(bytes: Array(fields[1])),
            ConstantTime.equals(signature, mac.authenticationCode(for: encodedPolicy))
        else {
            throw UpError(.badSignature, detail: "token HMAC mismatch for \(accessKey)")
        }
        guard let policyBytes = URLSafeBase64.decode(bytes: encodedPolicy) else {
            throw UpError(.badToken, detail: "policy is not base64")
        }
        let policy: PutPolicy
        do {
            policy = try PutPolicy(jsonBytes: policyBytes)
        } catch {
            throw UpError(.badToken, detail: error.detail)
        }
        guard now <= policy.deadline else {
            throw UpError(.expiredToken, detail: "deadline \(policy.deadline), now \(now)")
        }
        return UpToken(
            accessKey: accessKey, encodedPolicy: String(decoding: encodedPolicy, as: UTF8.self), policy: policy)
    }

    /// Extracts the token from an `Authorization: UpToken <token>` header (§1.1: literal
    /// `UpToken`, one space).
    ///
    /// - Parameter authorization: The header value, or `nil` when absent.
    /// - Returns: The token text.
    /// - Throws: ``UpError`` `.badToken` when the header is missing or has another scheme
    ///   (§1.2 step 1: resumable uploads answer `bad token`, form uploads `token not specified`).
    public static func token(fromAuthorization authorization: String?) throws(UpError) -> String {
        let prefix = "UpToken "
        guard let authorization, authorization.utf8.starts(with: prefix.utf8) else {
            throw UpError(.badToken, detail: "no UpToken authorization")
        }
        // Cut by bytes: a combining mark after the space would otherwise join it in one Character.
        return String(decoding: authorization.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }
}
