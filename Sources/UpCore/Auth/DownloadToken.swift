public import NativeCrypto

/// The signed download URL of a private bucket, as the Python SDK's
/// `Auth.private_download_url(url, expires)` makes it:
///
/// ```
/// <url>?e=<deadline>&token=<AK>:<B64(HMAC-SHA1(SK, "<url>?e=<deadline>"))>
/// ```
///
/// (`&e=` when `url` already has a query.) The signature covers the whole URL the client was
/// given — scheme, host and port included — so the server checks it against the URLs the request
/// could have been made under (`verify(target:bases:keys:now:)`). `token` must be the last
/// query parameter, as the SDK writes it; `e` is Unix seconds.
public enum DownloadToken {
    /// Why a URL was refused; every case is `401` for the client.
    public enum Refusal: Error, Equatable, Sendable {
        /// No `e`/`token`, or not in the SDK's shape.
        case missing
        /// `now > e`.
        case expired
        /// Unknown AccessKey or no base under which the signature verifies.
        case forged
    }

    /// Signs `url` (no `token` yet) until `deadline`: what the SDK's `private_download_url`
    /// returns (for tests and tools).
    public static func sign(url: String, deadline: Int64, accessKey: String, mac: HMACSHA1) -> String {
        let unsigned = url + (url.contains("?") ? "&" : "?") + "e=\(deadline)"
        let code = URLSafeBase64.encode(mac.authenticationCode(for: Array(unsigned.utf8)))
        return unsigned + "&token=\(accessKey):\(code)"
    }

    /// Checks a request's raw `target` (`/dl/…?e=…&token=…`, as received).
    ///
    /// - Parameters:
    ///   - target: The request-target, still percent-encoded.
    ///   - bases: Every `scheme://host[:port][/prefix]` the URL may have been signed under.
    ///   - keys: The accepted key pairs.
    ///   - now: Unix seconds.
    /// - Returns: The AccessKey that signed.
    public static func verify(target: String, bases: [String], keys: KeyRing, now: Int64) throws(Refusal) -> String {
        guard let marker = target.utf8.lastIndexRange(of: Array("&token=".utf8)) else { throw .missing }
        let unsigned = String(target[..<marker.lowerBound])
        let token = target[marker.upperBound...]
        guard let colon = token.firstIndex(of: ":"), let query = unsigned.split(separator: "?", maxSplits: 1).last,
            unsigned.contains("?")
        else { throw .missing }
        let deadlineText = query.split(separator: "&").last { $0.hasPrefix("e=") }?.dropFirst(2)
        guard let deadlineText, let deadline = Int64(deadlineText) else { throw .missing }
        guard now <= deadline else { throw .expired }
        guard let mac = keys.mac(for: token[..<colon]) else { throw .forged }
        let given = Array(token[token.index(after: colon)...].utf8)
        for base in bases {
            let expected = URLSafeBase64.encode(mac.authenticationCode(for: Array((base + unsigned).utf8)))
            if ConstantTime.equals(Array(expected.utf8), given) { return String(token[..<colon]) }
        }
        throw .forged
    }
}

extension String.UTF8View {
    /// The last occurrence of `pattern`, as a range of string indices.
    fileprivate func lastIndexRange(of pattern: [UInt8]) -> Range<String.Index>? {
        let bytes = Array(self)
        guard bytes.count >= pattern.count else { return nil }
        for start in stride(from: bytes.count - pattern.count, through: 0, by: -1)
        where bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
            return index(startIndex, offsetBy: start)..<index(startIndex, offsetBy: start + pattern.count)
        }
        return nil
    }
}
