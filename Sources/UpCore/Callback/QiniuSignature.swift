public import NativeCrypto

/// The v2 "Qiniu" request signature (qiniu-protocol.md §3.3):
///
/// ```
/// METHOD " " path["?" query] "\n"
/// "Host: " host "\n"
/// ["Content-Type: " type "\n"]
/// [Canonical-X-Qiniu-Name ": " value "\n"]*      sorted by name
/// "\n"
/// [body]     only with a content type other than application/octet-stream, when non-empty
/// ```
public enum QiniuSignature {
    /// Canonicalizes a header name Go-style: first letter and each letter after `-` upper
    /// case, the rest lower case (`x-qiniu-date` → `X-Qiniu-Date`).
    ///
    /// - Parameter name: A header name.
    /// - Returns: The canonical name.
    public static func canonicalHeaderName(_ name: some StringProtocol) -> String {
        var output = [UInt8]()
        output.reserveCapacity(name.utf8.count)
        var upper = true
        for byte in name.utf8 {
            var byte = byte
            if upper, byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 32 }
            if !upper, byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte += 32 }
            output.append(byte)
            upper = byte == UInt8(ascii: "-")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The `X-Qiniu-*` headers covered by the signature: names canonicalized (so incoming
    /// names match case-insensitively — unlike the Python SDK trap of §3.3), the bare
    /// `X-Qiniu-` excluded, sorted by name (byte order); for a repeated name the first value
    /// wins, as Go's `Header.Get` does.
    ///
    /// - Parameter headers: All request headers, any case.
    /// - Returns: `(canonical name, value)` pairs in signing order.
    public static func signedHeaders(_ headers: [(String, String)]) -> [(name: String, value: String)] {
        let prefix = "X-Qiniu-"
        var seen = Set<String>()
        var selected: [(name: String, value: String)] = []
        for (name, value) in headers {
            let canonical = canonicalHeaderName(name)
            guard canonical.utf8.count > prefix.utf8.count, canonical.utf8.starts(with: prefix.utf8),
                !seen.contains(canonical)
            else { continue }
            seen.insert(canonical)
            selected.append((canonical, value))
        }
        return selected.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The bytes that are HMACed.
    ///
    /// - Parameters:
    ///   - method: HTTP method, e.g. `POST`.
    ///   - target: Request-target `path[?query]` exactly as sent.
    ///   - host: The `Host` header value.
    ///   - contentType: The `Content-Type` value; `nil` or empty means absent (no line, no body).
    ///   - headers: All request headers; only `X-Qiniu-*` ones are used (see ``signedHeaders(_:)``).
    ///   - body: Raw body bytes.
    /// - Returns: The signing string as bytes.
    public static func signingBytes(
        method: String, target: String, host: String, contentType: String?, headers: [(String, String)],
        body: [UInt8]
    ) -> [UInt8] {
        var text = method + " " + target + "\nHost: " + host + "\n"
        let contentType = contentType.flatMap { $0.isEmpty ? nil : $0 }
        if let contentType { text += "Content-Type: " + contentType + "\n" }
        for (name, value) in signedHeaders(headers) { text += name + ": " + value + "\n" }
        text += "\n"
        var bytes = Array(text.utf8)
        // §3.3: Python signs any non-octet-stream body; go-sdk only form/JSON. Identical for callbacks.
        if let contentType, contentType != "application/octet-stream", !body.isEmpty {
            bytes.append(contentsOf: body)
        }
        return bytes
    }

    /// The `Authorization` header value: `Qiniu AK:sign`.
    ///
    /// - Parameters:
    ///   - method: HTTP method.
    ///   - target: Request-target `path[?query]`.
    ///   - host: The `Host` header value.
    ///   - contentType: The `Content-Type` value, or `nil`.
    ///   - headers: All request headers (only `X-Qiniu-*` are signed); may be empty.
    ///   - body: Raw body bytes.
    ///   - accessKey: The AccessKey.
    ///   - mac: HMAC-SHA1 prepared with the SecretKey.
    /// - Returns: `Qiniu AK:B64(HMAC)`.
    public static func sign(
        method: String, target: String, host: String, contentType: String?, headers: [(String, String)] = [],
        body: [UInt8], accessKey: String, mac: HMACSHA1
    ) -> String {
        let bytes = signingBytes(
            method: method, target: target, host: host, contentType: contentType, headers: headers, body: body)
        return "Qiniu " + accessKey + ":" + URLSafeBase64.encode(mac.authenticationCode(for: bytes))
    }
}
