public import NativeCrypto

/// The classic callback signature (qiniu-protocol.md §3.2):
/// `"QBox " AK ":" B64(HMAC(SK, path["?" query] "\n" [body]))`.
public enum QBoxSignature {
    /// The only content type whose body is signed — exact string, no `; charset` (§3.1, §3.2).
    public static let formContentType = "application/x-www-form-urlencoded"

    /// The bytes that are HMACed.
    ///
    /// - Parameters:
    ///   - target: Request-target `path[?query]` exactly as sent (still percent-encoded);
    ///     scheme, host and port are not signed.
    ///   - body: Raw body bytes.
    ///   - contentType: The `Content-Type` value; the body is appended only when it is exactly
    ///     ``formContentType`` (JSON bodies are not signed under QBox, as the SDK verifiers do).
    /// - Returns: The signing string as bytes.
    public static func signingBytes(target: String, body: [UInt8], contentType: String?) -> [UInt8] {
        var bytes = Array(target.utf8)
        bytes.append(UInt8(ascii: "\n"))
        if contentType == formContentType { bytes.append(contentsOf: body) }
        return bytes
    }

    /// `AK:sign` — what Python's `Auth.token_of_request` returns.
    ///
    /// - Parameters:
    ///   - target: Request-target `path[?query]`.
    ///   - body: Raw body bytes.
    ///   - contentType: The `Content-Type` value, or `nil`.
    ///   - accessKey: The AccessKey.
    ///   - mac: HMAC-SHA1 prepared with the SecretKey.
    /// - Returns: `AK:B64(HMAC)`.
    public static func token(
        target: String, body: [UInt8] = [], contentType: String? = nil, accessKey: String, mac: HMACSHA1
    ) -> String {
        let code = mac.authenticationCode(for: signingBytes(target: target, body: body, contentType: contentType))
        return accessKey + ":" + URLSafeBase64.encode(code)
    }

    /// The `Authorization` header value: `QBox AK:sign`.
    ///
    /// - Parameters:
    ///   - target: Request-target `path[?query]`.
    ///   - body: Raw body bytes.
    ///   - contentType: The `Content-Type` value, or `nil`.
    ///   - accessKey: The AccessKey.
    ///   - mac: HMAC-SHA1 prepared with the SecretKey.
    /// - Returns: `QBox AK:B64(HMAC)`.
    public static func sign(
        target: String, body: [UInt8], contentType: String?, accessKey: String, mac: HMACSHA1
    ) -> String {
        "QBox " + token(target: target, body: body, contentType: contentType, accessKey: accessKey, mac: mac)
    }
}
