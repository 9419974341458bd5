import UpCore

/// A JWT in JWS compact serialization (RFC 7515 §7.1, RFC 7519 §3), split and decoded but not
/// yet trusted: `BASE64URL(header) . BASE64URL(claims) . BASE64URL(signature)`.
///
/// Pure and strict: no padding, canonical base64url only, the header a JSON object with unique
/// members, `alg` a string, `kid` a string if present, no `crit` (we implement no extension, and
/// RFC 7515 §4.1.11 requires refusing one not understood). Header members that point at keys
/// (`jku`, `jwk`, `x5u`, `x5c`) are never used: keys come only from the configuration.
struct CompactJWT: Equatable {
    /// Longest token accepted, in bytes: real ones are well under 2 KiB.
    static let maxBytes = 8192

    /// The `alg` header.
    let algorithm: String
    /// The `kid` header.
    let keyID: String?
    /// The decoded claims set, parsed only after the signature verifies.
    let payload: [UInt8]
    /// `header.claims` as sent: what the signature covers.
    let signingInput: [UInt8]
    /// The decoded signature (empty for `alg: none` tokens).
    let signature: [UInt8]

    /// Whether `bearer` has the shape of a JWT (three dot-separated base64url parts, the first two
    /// non-empty) rather than of an API key. Only the shape: everything else is `parse`'s job.
    static func looksLikeJWT(_ bearer: some StringProtocol) -> Bool {
        var dots = 0
        var partLength = 0
        for byte in bearer.utf8 {
            if byte == UInt8(ascii: ".") {
                guard partLength > 0, dots < 2 else { return false }
                dots += 1
                partLength = 0
            } else {
                guard isURLSafeCharacter(byte) else { return false }
                partLength += 1
            }
        }
        return dots == 2
    }

    /// Splits and decodes `token`; throws `malformed` (or `alg_none`) saying what is wrong.
    static func parse(_ token: String) throws(JWTRefusal) -> CompactJWT {
        let bytes = Array(token.utf8)
        guard bytes.count <= maxBytes else { throw .malformed("longer than \(maxBytes) bytes") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .malformed("not three dot-separated base64url parts")
        }
        guard let headerBytes = decode(parts[0]) else { throw .malformed("header is not base64url") }
        guard let payload = decode(parts[1]) else { throw .malformed("claims are not base64url") }
        guard let signature = parts[2].isEmpty ? [] : decode(parts[2]) else {
            throw .malformed("signature is not base64url")
        }
        let header: JSONObject
        switch JSONObject.parse(headerBytes) {
        case .success(let object): header = object
        case .failure(.duplicate(let name)): throw .malformed("header member '\(name)' appears twice")
        case .failure(.notAnObject), nil: throw .malformed("header is not a JSON object")
        }
        guard let algorithm = header["alg"]?.stringValue else { throw .malformed("header has no alg string") }
        if algorithm.lowercased() == "none" { throw JWTRefusal(.algNone) }
        let keyID: String?
        switch header["kid"] {
        case nil: keyID = nil
        case .string(let value)?: keyID = value
        default: throw .malformed("kid must be a string")
        }
        if header["crit"] != nil { throw .malformed("crit extensions are not supported") }
        return CompactJWT(
            algorithm: algorithm, keyID: keyID, payload: payload,
            signingInput: Array(bytes[..<(parts[1].endIndex)]), signature: signature)
    }

    /// Unpadded, canonical base64url (RFC 7515 §2), nil for anything else.
    private static func decode(_ part: ArraySlice<UInt8>) -> [UInt8]? {
        guard !part.contains(UInt8(ascii: "=")) else { return nil }
        return URLSafeBase64.decode(bytes: Array(part))
    }
}
